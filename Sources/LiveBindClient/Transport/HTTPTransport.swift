import Foundation
import Synchronization

/// A server's answer to one request.
struct HTTPAnswer: Sendable {
    var status: Int
    /// Header names lower-cased.
    var headers: [String: String]
    var body: Data

    /// The body as JSON (nil when it is empty or not JSON).
    var json: JSON? { body.isEmpty ? nil : try? JSON(parsing: body) }

    /// `Retry-After` in seconds, at most 60, when the answer has a sensible one; a date, a negative
    /// number, `nan`, `inf` or more than a day is none (the usual backoff applies).
    var retryAfter: Double? {
        guard let seconds = headers["retry-after"].flatMap(Double.init), (0...86400).contains(seconds) else { return nil }
        return min(seconds, 60)
    }
}

/// A request about to be sent: its method, target (a path and query, already percent-encoded) and
/// headers.
struct HTTPRequest: Sendable {
    var method: String
    var target: String
    var headers: [String: String]
}

/// An answer whose body is read as it comes (an event stream). Letting go of it ends the transfer.
final class HTTPStream: Sendable {
    let status: Int
    /// Header names lower-cased.
    let headers: [String: String]
    private let transfer: CurlTransfer

    fileprivate init(_ transfer: CurlTransfer, _ head: CurlTransfer.Head) {
        self.transfer = transfer
        status = head.status
        headers = HTTPTransport.lowercased(head.headers)
    }

    deinit { transfer.cancel() }

    /// The body's chunks as they arrive (the sequence keeps this stream, and so its transfer, open).
    var body: CurlTransfer.Chunks { CurlTransfer.Chunks(transfer: transfer, owner: self) }

    /// The whole body, at most `maxBytes`.
    func collect(upTo maxBytes: Int) async throws -> Data { try await transfer.collect(upTo: maxBytes) }

    /// Bytes received and not read yet.
    var unreadBytes: Int { transfer.unreadBytes }
}

/// Requests to one server through libcurl (``CurlLoop``; TLS with the system's trust store, or the
/// certificates given): the base address, the bearer token, and the cookies the server set (sent back
/// on every request, as a browser would for one site). A redirect is not followed: a write re-sent to
/// another origin, or a stream mirroring another server, is not what the application asked for, so a
/// 3xx is a refusal. A connection refused is reported at once (the offline queue depends on knowing the
/// server is away); one that does not complete in 5 s fails.
final class HTTPTransport: Sendable {
    let base: String
    let token: String?
    /// A PEM file of the certificates `https` trusts instead of the system's.
    let caFile: String?
    private let cookies = OrderedMutex<[String: String]>([:])
    private static let connectTimeout = Duration.seconds(5)

    init(base: URL, token: String?, caFile: String?) {
        self.base = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
        self.token = token
        self.caFile = caFile
    }

    /// A request for `target` (a path and query, already percent-encoded, starting with `/`).
    func request(_ method: String, _ target: String, headers: [String: String] = [:]) -> HTTPRequest {
        HTTPRequest(method: method, target: target, headers: headers)
    }

    /// The transfer of `request`, its cookies and credentials added at the moment it is sent.
    private func transfer(_ request: HTTPRequest, body: [UInt8]?, timeout: Duration?, silence: Duration? = nil)
        -> CurlTransfer
    {
        var headers = ["accept": "Accept: application/json"]
        if let token { headers["authorization"] = "Authorization: Bearer \(token)" }
        let cookie = cookies.withLock { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } }
        if !cookie.isEmpty { headers["cookie"] = "Cookie: " + cookie.joined(separator: "; ") }
        for (name, value) in request.headers { headers[name.lowercased()] = "\(name): \(value)" }
        return CurlTransfer(
            method: request.method, url: base + request.target, headers: headers.keys.sorted().map { headers[$0]! },
            body: body, timeout: timeout, connectTimeout: Self.connectTimeout, silence: silence, caFile: caFile)
    }

    /// Sends `request` and reads its whole answer (at most `maxBytes`); throws when the server cannot
    /// be reached or the answer is lost or late (`timeout` seconds for the whole answer, its body too:
    /// a body that trickles in is late).
    func send(_ request: HTTPRequest, body: [UInt8]? = nil, timeout: Int64 = 10, maxBytes: Int = 64 << 20)
        async throws -> HTTPAnswer
    {
        let transfer = transfer(request, body: body, timeout: .seconds(timeout))
        let head = try await transfer.start()
        remember(head.headers)
        let data = try await transfer.collect(upTo: maxBytes)
        return HTTPAnswer(status: head.status, headers: Self.lowercased(head.headers), body: data)
    }

    /// Opens `request` for a body read as it comes (an event stream): no deadline, the caller ends it
    /// by cancelling its task or letting go of the stream. With `silence`, the transfer fails (the
    /// head or the body throws) when no line arrives for that long while the reader keeps up: a
    /// server that sends heartbeats is alive for as long as they come, however slow its reader is.
    func open(_ request: HTTPRequest, silence: Duration? = nil) async throws -> HTTPStream {
        let transfer = transfer(request, body: nil, timeout: nil, silence: silence)
        let head = try await transfer.start()
        remember(head.headers)
        return HTTPStream(transfer, head)
    }

    /// Keeps the cookies an answer sets (`name=value`; one with `Max-Age=0` or an empty value goes).
    private func remember(_ headers: [(name: String, value: String)]) {
        let set = headers.filter { $0.name == "set-cookie" }
        guard !set.isEmpty else { return }
        cookies.withLock { jar in
            for (_, line) in set {
                let parts = line.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
                guard let pair = parts.first, let equals = pair.firstIndex(of: "=") else { continue }
                let name = String(pair[..<equals]), value = String(pair[pair.index(after: equals)...])
                let expired = parts.dropFirst().contains { $0.lowercased() == "max-age=0" }
                if value.isEmpty || expired { jar[name] = nil } else { jar[name] = value }
            }
        }
    }

    /// Headers by lower-cased name; of a repeated one, the last.
    static func lowercased(_ headers: [(name: String, value: String)]) -> [String: String] {
        var lowered: [String: String] = [:]
        for (name, value) in headers { lowered[name.lowercased()] = value }
        return lowered
    }
}
