/// A request whose body is still arriving; owned by libmicrohttpd's per-request context pointer.
///
/// Only ever touched on the worker thread that serves its connection.
final class MicroHTTPDPendingRequest {
    var request: HTTPRequest
    var failure: HTTPTransportFailure?
    /// Whether the answer is an open-ended stream (a timeout then means the client stopped reading).
    private(set) var isStream = false
    private(set) var receivedBytes = 0
    let bodyLimit: Int
    /// The answer the suspended connection waits for.
    var deferred: DeferredAnswer?

    init(request: HTTPRequest, bodyLimit: Int) {
        self.request = request
        self.bodyLimit = bodyLimit
    }

    /// Adds one body piece; past the limit the bytes are counted and dropped.
    /// Returns false when the client keeps sending far past the limit (close the connection).
    func append(_ piece: UnsafeRawBufferPointer) -> Bool {
        receivedBytes += piece.count
        if receivedBytes > bodyLimit {
            failure = .bodyTooLarge(limit: bodyLimit)
            request.body = []
            return receivedBytes <= max(bodyLimit, 1 << 20) * 16
        }
        request.body.append(contentsOf: piece)
        return true
    }

    /// The request is answered with an open-ended stream, which lives as long as its connection:
    /// its headers, query and body are not needed any more, so thousands of streams do not keep them.
    func answeredWithStream() {
        isStream = true
        request = HTTPRequest(method: request.method, path: request.path)
    }
}
