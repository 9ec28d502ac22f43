/// An RFC 9457 problem: the one shape every error takes on the wire (`application/problem+json`).
package struct Problem: Sendable {
    /// The HTTP status.
    var status: Int
    /// A URI naming the kind of problem.
    var type: String
    /// A short summary of the kind.
    var title: String
    /// What went wrong this time, and what to do about it.
    package var detail: String
    /// Extra response headers (`Allow` for a 405, `Retry-After` for a 503).
    package var headers: HTTPHeaders = HTTPHeaders()
    /// For a limit a client can keep within: the setting's flag and its value, sent as the extension
    /// members `"setting"` and `"limit"` (a client lowers its request to `limit` and asks again).
    package var limit: (setting: String, value: Int)?

    /// Makes a problem of the given kind (a short slug such as `type-mismatch`).
    package init(status: Int, kind: String, title: String, detail: String) {
        self.status = status
        self.type = "urn:livebind:problem:\(kind)"
        self.title = title
        self.detail = detail
    }

    /// The problem as a response.
    package var response: HTTPResponse {
        var body = "{\"type\":"
        body += Self.quoted(type) + ",\"title\":" + Self.quoted(title)
        body += ",\"status\":\(status),\"detail\":" + Self.quoted(detail)
        if let limit { body += ",\"setting\":" + Self.quoted(limit.setting) + ",\"limit\":\(limit.value)" }
        body += "}"
        var response = HTTPResponse.text(body, status: status, contentType: "application/problem+json")
        for (name, value) in headers { response.headers.add(name, value) }
        return response
    }

    /// A JSON string literal.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// A problem an endpoint made itself, thrown to the one place that answers errors: a blind write's
/// refusal (whose detail names nothing of the model), a write to several models naming the model.
package struct ProblemError: Error {
    /// The problem to answer.
    package let problem: Problem

    /// `problem`, to be thrown as it is.
    package init(problem: Problem) {
        self.problem = problem
    }
}
