import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
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

/// Requests to one server through async-http-client (SwiftNIO; TLS with the system's trust store, or
/// the certificates given):
/// the base address, the bearer token, and the cookies the server set (sent back on every request,
/// as a browser would for one site).
final class HTTPTransport: Sendable {
    let base: String
    let token: String?
    private let cookies = OrderedMutex<[String: String]>([:])
    /// A client of its own: a connection pool wide enough for many mirrors' streams beside the writes
    /// (each stream holds a connection), and a refused connection reported at once, not retried until
    /// the connect timeout (the offline queue depends on knowing the server is away).
    private let http: HTTPClient

    init(base: URL, token: String?, trusted: [NIOSSLCertificate]?) {
        self.base = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
        self.token = token
        var configuration = HTTPClient.Configuration()
        if let trusted {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(trusted)
            configuration.tlsConfiguration = tls
        }
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout = .init(connect: .seconds(5))
        // A redirect is not followed: a write re-sent to another origin, or a stream mirroring another
        // server, is not what the application asked for. A 3xx is a refusal.
        configuration.redirectConfiguration = .disallow
        http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    deinit {
        http.shutdown { _ in }
    }

    /// A request for `target` (a path and query, already percent-encoded, starting with `/`).
    func request(_ method: String, _ target: String, headers: [String: String] = [:]) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: base + target)
        request.method = HTTPMethod(rawValue: method)
        request.headers.add(name: "Accept", value: "application/json")
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        let cookie = cookies.withLock { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } }
        if !cookie.isEmpty { request.headers.add(name: "Cookie", value: cookie.joined(separator: "; ")) }
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        return request
    }

    /// Sends `request` and reads its whole answer (at most `maxBytes`); throws when the server cannot
    /// be reached or the answer is lost or late.
    func send(_ request: HTTPClientRequest, body: [UInt8]? = nil, timeout: Int64 = 10, maxBytes: Int = 64 << 20)
        async throws -> HTTPAnswer
    {
        var prepared = request
        if let body { prepared.body = .bytes(ByteBuffer(bytes: body)) }
        let sent = prepared
        // The deadline covers the whole answer, its body too (a body that trickles in is late).
        return try await withThrowingTaskGroup(of: HTTPAnswer?.self) { group in
            group.addTask {
                let response = try await self.http.execute(sent, timeout: .seconds(timeout))
                self.remember(response.headers)
                let buffer = try await response.body.collect(upTo: maxBytes)
                return HTTPAnswer(
                    status: Int(response.status.code), headers: Self.lowercased(response.headers),
                    body: Data(buffer.readableBytesView))
            }
            group.addTask {
                try await Task.sleep(for: .seconds(timeout))
                return nil
            }
            defer { group.cancelAll() }
            guard let answer = try await group.next() ?? nil else { throw HTTPClientError.deadlineExceeded }
            return answer
        }
    }

    /// Opens `request` for a body read as it comes (an event stream): no deadline, the caller ends it
    /// by cancelling its task.
    func open(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        let response = try await http.execute(request, deadline: .distantFuture)
        remember(response.headers)
        return response
    }

    /// Keeps the cookies an answer sets (`name=value`; one with `Max-Age=0` or an empty value goes).
    private func remember(_ headers: HTTPHeaders) {
        let set = headers["set-cookie"]
        guard !set.isEmpty else { return }
        cookies.withLock { jar in
            for line in set {
                let parts = line.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
                guard let pair = parts.first, let equals = pair.firstIndex(of: "=") else { continue }
                let name = String(pair[..<equals]), value = String(pair[pair.index(after: equals)...])
                let expired = parts.dropFirst().contains { $0.lowercased() == "max-age=0" }
                if value.isEmpty || expired { jar[name] = nil } else { jar[name] = value }
            }
        }
    }

    static func lowercased(_ headers: HTTPHeaders) -> [String: String] {
        var lowered: [String: String] = [:]
        for (name, value) in headers { lowered[name.lowercased()] = value }
        return lowered
    }
}
