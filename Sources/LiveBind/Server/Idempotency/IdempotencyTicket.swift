import Crypto
import Foundation
import LiveBindEngine
internal import LiveBindHTTP

/// One write request's `Idempotency-Key`, scoped to its credential, with the fingerprint of what it
/// asks (method, path, query, preconditions, media type, body): the same key with another request is
/// refused, not answered with the first one's answer.
struct IdempotencyTicket: Sendable {
    /// The header.
    static let header = "Idempotency-Key"
    /// Longest key taken.
    static let maxKeyLength = 255

    /// The credential's scope and the key: `<scope>:<key>`.
    let key: String
    /// The key as the client sent it, for error messages.
    let displayKey: String
    /// SHA-256 of the request, hex.
    let fingerprint: String
    /// What the answer shows beyond id and revision: `c` when it may be a create (201), `i` when it
    /// names an inserted index, `s` when it is a write to several models (`PATCH /models`, whose tag
    /// the store completes with every model's result).
    let flags: String
    /// The request's serial: a cluster node runs the same request again after a lost race.
    let owner: UInt64
    /// When the request came: the receipt's age is counted from it on every node.
    let created: Date

    /// The ticket of `request` (nil without the header), written with `grant`; `flags` as above.
    /// Throws 400 for a key that is empty, longer than 255 bytes, or not printable ASCII without spaces.
    init?(_ request: HTTPRequest, grant: AccessControl.Grant, flags: String) throws(IdempotencyError) {
        guard let given = request.headers[Self.header] else { return nil }
        let value = given.trimmingWhitespace()
        guard !value.isEmpty, value.utf8.count <= Self.maxKeyLength, value.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .invalid
        }
        displayKey = value
        key = Self.scope(of: grant.credential, token: AccessControl.bearer(request)) + ":" + value
        var hasher = SHA256()
        func add(_ text: String) {
            hasher.update(data: Array(text.utf8))
            hasher.update(data: [0])
        }
        add(request.method.rawValue)
        add(request.path)
        for (name, value) in request.query { add(name + "=" + value) }
        for name in ["Content-Type", "If-Match", "If-None-Match"] { add(request.headers[name] ?? "") }
        hasher.update(data: request.body)
        fingerprint = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        self.flags = flags.isEmpty ? "-" : flags
        owner = request.serial
        created = Date()
    }

    /// Whose keys these are: a JWT's subject, else the token (a static token's secret, a JWT without
    /// `sub`, presented as `token`), else the session; `anyone` for requests without a credential.
    /// Hashed: the log keeps it.
    static func scope(of credential: AccessControl.Credential?, token: String?) -> String {
        guard let credential else { return "anyone" }
        let name: String
        if let subject = credential.subject {
            name = "subject " + subject
        } else if let secret = credential.rateKey {
            name = "token " + secret
        } else if let session = credential.session {
            name = "session " + session.map { String(format: "%02x", $0) }.joined()
        } else {
            name = "bearer " + (token ?? "")
        }
        return SHA256.hash(data: Array(("livebind idempotency " + name).utf8)).prefix(16)
            .map { String(format: "%02x", $0) }.joined()
    }

    /// What the commit log keeps with the write's commit: `<fingerprint> <flags> <created ms> <key>`.
    var tag: String { fingerprint + " " + flags + " " + String(Int64(created.timeIntervalSince1970 * 1000)) + " " + key }

    /// The parts of a tag, nil when it is not one (what the store added after a newline is not part of it).
    static func parse(tag: String) -> (fingerprint: String, flags: String, created: Date, key: String)? {
        let head = tag.prefix { $0 != "\n" }
        let parts = head.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0].utf8.count == 64, let milliseconds = Int64(parts[2]), !parts[3].isEmpty else { return nil }
        return (String(parts[0]), String(parts[1]), Date(timeIntervalSince1970: Double(milliseconds) / 1000), String(parts[3]))
    }
}

/// Why a request's `Idempotency-Key` cannot be honoured.
enum IdempotencyError: Error, Equatable, CustomStringConvertible {
    /// Not a key this server takes (400).
    case invalid
    /// The key was used with another request (422).
    case reused(key: String)
    /// A request with the key is running (409, retry shortly).
    case inUse(key: String)

    var description: String {
        switch self {
        case .invalid:
            "Idempotency-Key takes 1 to \(IdempotencyTicket.maxKeyLength) printable ASCII characters without spaces, such as a UUID"
        case .reused(let key):
            "Idempotency-Key \(key) was used for another request (method, path, preconditions or body differ): use a new key for a new request"
        case .inUse(let key):
            "a request with Idempotency-Key \(key) is running: retry shortly with the same key to get its answer"
        }
    }

    var problem: Problem {
        switch self {
        case .invalid: return Problem(status: 400, kind: "bad-request", title: "Bad Request", detail: description)
        case .reused: return Problem(status: 422, kind: "idempotency-key-reused", title: "Unprocessable Content", detail: description)
        case .inUse:
            var problem = Problem(status: 409, kind: "idempotency-key-in-use", title: "Conflict", detail: description)
            problem.headers.add("Retry-After", "1")
            return problem
        }
    }
}

/// What write routes go through for `Idempotency-Key`.
struct IdempotentWrites: Sendable {
    let table: IdempotencyTable
    let store: Store
    /// The data directory of a server that is not a cluster node: the answers of keyed writes that
    /// committed nothing are kept there (see ``keepUncommitted(_:_:)``).
    let database: StateDatabase?

    /// Runs the write `body` once per `Idempotency-Key` (see `IdempotencyTable`): without the header it
    /// just runs; with a key it already answered (the same request), the first answer comes back with
    /// `Idempotent-Replayed: true` and nothing runs. When `tagged`, the write's commit carries the
    /// ticket into the commit log, so that every node and a restart learn the answer; else the answer
    /// is remembered by this node until it restarts.
    func run(
        _ request: HTTPRequest, _ grant: AccessControl.Grant, flags: String, tagged: Bool,
        _ body: () throws -> HTTPResponse
    ) throws -> HTTPResponse {
        try run(request, grant, flags: flags) { ticket in
            guard tagged, let ticket else { return try body() }
            let (result, logged) = store.withCommitTagLogged(ticket.tag, body)
            switch result {
            case .success(let response): return logged ? response : keepUncommitted(ticket, response)
            case .failure(let error):
                if logged { throw error }
                return keepUncommitted(ticket, Problem.from(error).response)
            }
        }
    }

    /// `response`, the answer of the keyed write `ticket` names that committed nothing (an equal value,
    /// a refusal), once a data directory keeps it as an ``AnswerReceipt``: a retry after a restart gets
    /// it again rather than running again over whatever was written since. 503 when it cannot be kept.
    private func keepUncommitted(_ ticket: IdempotencyTicket, _ response: HTTPResponse) -> HTTPResponse {
        guard let database, let receipt = AnswerReceipt(tag: ticket.tag, response: response, sequence: 0) else { return response }
        do {
            try database.saveAnswer(receipt.record)
        } catch {
            return Problem.from(error).response
        }
        return response
    }

    /// Runs the `/bindings` write `body` once per `Idempotency-Key`, as above; `body` gets the ticket's
    /// tag (nil without the header) to keep with its change, as an ``AnswerReceipt``.
    func runRecording(
        _ request: HTTPRequest, _ grant: AccessControl.Grant,
        _ body: (_ tag: String?) throws -> HTTPResponse
    ) throws -> HTTPResponse {
        try run(request, grant, flags: "") { ticket in
            do {
                return try body(ticket?.tag)
            } catch {
                // A refusal changed nothing: its answer is kept as that of a model write that committed nothing.
                guard let ticket else { throw error }
                return keepUncommitted(ticket, Problem.from(error).response)
            }
        }
    }

    private func run(
        _ request: HTTPRequest, _ grant: AccessControl.Grant, flags: String,
        _ body: (IdempotencyTicket?) throws -> HTTPResponse
    ) throws -> HTTPResponse {
        guard let ticket = try IdempotencyTicket(request, grant: grant, flags: flags) else { return try body(nil) }
        if let answer = try table.begin(ticket) {
            var response = HTTPResponse(status: answer.status, body: .bytes(answer.body))
            for (name, value) in answer.headers { response.headers.add(name, value) }
            response.headers.add("Idempotent-Replayed", "true")
            return response
        }
        var response: HTTPResponse
        do {
            response = try body(ticket)
        } catch {
            // Answered, not thrown, so that the ticket goes with it (the server counts the error).
            response = Problem.from(error).response
        }
        response.settle = { [table] in table.settle(ticket, $0) }
        return response
    }
}
