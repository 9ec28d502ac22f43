import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A server's answer to one request.
struct HTTPAnswer: Sendable {
    var status: Int
    /// Header names lower-cased.
    var headers: [String: String]
    var body: Data

    /// The body as JSON (nil when it is empty or not JSON).
    var json: JSON? { body.isEmpty ? nil : try? JSON(parsing: body) }

    /// `Retry-After` in seconds, when the answer has one.
    var retryAfter: Double? { headers["retry-after"].flatMap(Double.init) }
}

/// Requests to one server through `URLSession`: the base address, the bearer token, cookies (the
/// session's cookie storage), TLS (the platform's). One session serves every request of a client;
/// event streams get a session of their own each (see `EventConnection`).
final class HTTPTransport: Sendable {
    let base: URL
    let token: String?
    let configuration: URLSessionConfiguration
    private let session: URLSession

    init(base: URL, token: String?, configuration: URLSessionConfiguration) {
        self.base = base
        self.token = token
        self.configuration = configuration
        session = URLSession(configuration: configuration)
    }

    deinit { session.invalidateAndCancel() }

    /// A request for `target` (a path and query, already percent-encoded, starting with `/`).
    func request(_ method: String, _ target: String, headers: [String: String] = [:], timeout: TimeInterval = 10)
        -> URLRequest
    {
        var request = URLRequest(url: URL(string: base.absoluteString.trimmingSuffix("/") + target)!)
        request.httpMethod = method
        request.timeoutInterval = timeout
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    /// Sends `request`; throws `URLError` when the server cannot be reached or the answer is lost.
    func send(_ request: URLRequest, body: Data? = nil) async throws -> HTTPAnswer {
        var request = request
        request.httpBody = body
        return try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else if let response = response as? HTTPURLResponse {
                    continuation.resume(returning: HTTPAnswer(
                        status: response.statusCode, headers: response.lowercasedHeaders, body: data ?? Data()))
                } else {
                    continuation.resume(throwing: URLError(.badServerResponse))
                }
            }.resume()
        }
    }
}

extension HTTPURLResponse {
    var lowercasedHeaders: [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return headers
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
