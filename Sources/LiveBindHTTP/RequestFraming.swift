/// The checks RFC 9112 (section 6) asks of a request's framing: where its body ends must be beyond
/// doubt, or a proxy in front could read a different request from the same bytes (request smuggling).
enum RequestFraming {
    /// Why `headers` do not say, in exactly one way, how long the body is; `nil` when they do.
    ///
    /// Refused: two `Content-Length` fields (equal or not), `Content-Length` with `Transfer-Encoding`,
    /// `chunked` applied twice or not last, and any transfer coding but `chunked` (501).
    static func failure(in headers: HTTPHeaders) -> HTTPTransportFailure? {
        // The usual request (at most one Content-Length, no Transfer-Encoding) is told apart in one
        // pass that makes nothing.
        var lengthFields = 0, encoded = false
        for field in headers.fields {
            if HTTPHeaders.sameName(field.name, "Transfer-Encoding") { encoded = true; break }
            if HTTPHeaders.sameName(field.name, "Content-Length") { lengthFields += 1 }
        }
        if !encoded && lengthFields < 2 { return nil }
        let lengths = headers.values(of: "Content-Length")
        let encodings = headers.values(of: "Transfer-Encoding")
        if lengths.count > 1 {
            return .ambiguousFraming("\(lengths.count) Content-Length fields (\(lengths.joined(separator: ", "))): send one")
        }
        guard !encodings.isEmpty else { return nil }
        if !lengths.isEmpty {
            return .ambiguousFraming("Content-Length together with Transfer-Encoding: send one of them")
        }
        let codings = encodings.flatMap { $0.split(separator: ",") }
            .map { $0.trimmingWhitespace().lowercased() }
        if let other = codings.first(where: { $0 != "chunked" }) {
            return .unsupportedTransferCoding(other)
        }
        if codings.count != 1 {
            return .ambiguousFraming("Transfer-Encoding applies chunked \(codings.count) times: apply it once")
        }
        return nil
    }
}
