/// A request the transport refused before the application saw its body.
package enum HTTPTransportFailure: Sendable, Equatable {
    /// The body is (or announced to be) larger than the limit.
    case bodyTooLarge(limit: Int)
    /// A method that needs a body came without `Content-Length` or chunked encoding.
    case lengthRequired
    /// The request line or headers break HTTP (no `Host` on HTTP/1.1, a URL that is not UTF-8).
    case malformedRequest(String)
    /// The headers do not say in exactly one way where the body ends (RFC 9112, section 6): two
    /// `Content-Length` fields, or one with `Transfer-Encoding`. Answered 400, and the connection closed.
    case ambiguousFraming(String)
    /// A transfer coding other than `chunked`. Answered 501, and the connection closed.
    case unsupportedTransferCoding(String)
}
