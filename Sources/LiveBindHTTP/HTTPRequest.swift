/// A complete HTTP request as the router sees it: the body is fully read.
package struct HTTPRequest: Sendable {
    /// The request method.
    package var method: HTTPMethod
    /// The percent-decoded path, without the query string (always starts with `/`).
    package var path: String
    /// Query parameters in order; a name may repeat (`?model=a&model=b`).
    package var query: [(name: String, value: String)]
    /// The request's header fields.
    package var headers: HTTPHeaders
    /// The request body (empty when there was none).
    package var body: [UInt8]
    /// The client's numeric address, when the server records it (it does when writes are rate-limited
    /// or a proxy is trusted; behind a trusted proxy it is the address the proxy forwarded).
    package var clientAddress: String?
    /// `https` when the request came over TLS, or through a trusted proxy that says it did; else `http`.
    package var scheme = "http"
    /// A number the server gives each request it answers (0 until then): a cluster runs a write again
    /// after a lost race, and its `Idempotency-Key` knows it by this.
    package var serial: UInt64 = 0

    /// Makes a request; used by the libmicrohttpd bridge and by tests.
    package init(
        method: HTTPMethod, path: String, query: [(name: String, value: String)] = [],
        headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// The first value of the query parameter `name`, if present.
    package func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }

    /// Every value of the query parameter `name`, in order.
    package func queryValues(_ name: String) -> [String] {
        query.filter { $0.name == name }.map(\.value)
    }

    /// The media type of the body without parameters, lowercased (`application/json`), if given.
    package var mediaType: String? {
        guard let value = headers["Content-Type"] else { return nil }
        // Usually the type as it should be written: then it is the answer, and no copy is made.
        if !value.isEmpty,
            value.utf8.allSatisfy({
                $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: " ")
                    && $0 != UInt8(ascii: "\t") && !(0x41...0x5A).contains($0)
            })
        {
            return value
        }
        let type = value.utf8.firstIndex(of: UInt8(ascii: ";")).map { value[..<$0] } ?? Substring(value)
        let trimmed = type.trimmingWhitespace()
        guard !trimmed.isEmpty else { return nil }
        return trimmed.utf8.contains { (0x41...0x5A).contains($0) } ? trimmed.lowercased() : trimmed
    }
}

extension StringProtocol {
    /// The string without leading and trailing spaces and tabs.
    package func trimmingWhitespace() -> String {
        // Usually there is nothing to trim: then no new string is made.
        if let first = utf8.first, first != UInt8(ascii: " "), first != UInt8(ascii: "\t") {
            let string = String(self)
            if let last = string.utf8.last, last != UInt8(ascii: " "), last != UInt8(ascii: "\t") { return string }
        }
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
