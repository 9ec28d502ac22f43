/// An HTTP response: a status, header fields and either bytes or an open-ended stream.
package struct HTTPResponse: Sendable {
    /// What follows the headers.
    package enum Body: Sendable {
        /// A complete body, sent with a `Content-Length`.
        case bytes([UInt8])
        /// An open-ended body produced as the stream has data (Server-Sent Events).
        case stream(any HTTPStreamBody)
    }

    /// The status code, such as 200.
    package var status: Int
    /// The header fields, in order.
    package var headers: HTTPHeaders
    /// The body.
    package var body: Body
    /// Set when the real answer comes later (see ``DeferredAnswer``).
    package var deferred: DeferredAnswer?
    /// Told the answer the client finally gets, once the server has finished it (after a deferred
    /// answer completes): how a write's `Idempotency-Key` keeps its answer. The server calls it; the
    /// transport only carries it.
    package var settle: (@Sendable (HTTPResponse) -> Void)?

    /// Makes a response.
    package init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: Body = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response with a body of the given media type.
    package static func bytes(_ bytes: [UInt8], status: Int = 200, contentType: String) -> HTTPResponse {
        // Room for what most answers add on the way out (validators, `nosniff`, CORS), so the list is
        // allocated once.
        var headers = HTTPHeaders(capacity: 6)
        headers.add("Content-Type", contentType)
        return HTTPResponse(status: status, headers: headers, body: .bytes(bytes))
    }

    /// A UTF-8 text response.
    package static func text(
        _ text: String, status: Int = 200,
        contentType: String = "text/plain; charset=utf-8"
    ) -> HTTPResponse {
        bytes(Array(text.utf8), status: status, contentType: contentType)
    }

    /// The body bytes of a complete response (empty for a stream).
    var bodyBytes: [UInt8] {
        if case .bytes(let bytes) = body { return bytes }
        return []
    }
}
