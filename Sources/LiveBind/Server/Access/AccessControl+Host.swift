import LiveBindEngine
internal import LiveBindHTTP
extension AccessControl {
    /// Whether the server listens on a loopback address only (`127.x.x.x`, `::1`, `localhost`).
    static func isLoopback(address: String) -> Bool {
        let host = address.lowercased()
        return host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }

    /// The DNS-rebinding guard: on a loopback-only server every request must name a loopback host
    /// (`localhost`, `*.localhost`, `127.x.x.x`, `[::1]`) or the host of an allowed origin in `Host`.
    /// Otherwise a page on another site whose name was re-pointed at 127.0.0.1 would be "same origin"
    /// with this server. Requests without `Host` (HTTP/1.0) pass.
    func checkHost(_ request: HTTPRequest) throws(AccessError) {
        guard loopbackOnly, let header = request.headers["Host"]?.trimmingWhitespace() else { return }
        if Self.isPlainLoopback(header) { return }
        guard let authority = Origin(scheme: "http", authority: header) else { throw .hostNotAllowed(header) }
        let host = authority.host
        if host == "localhost" || host.hasSuffix(".localhost") || host == "[::1]" { return }
        if host.hasPrefix("127."), host.split(separator: ".").count == 4, host.allSatisfy({ $0.isNumber || $0 == "." }) { return }
        if allowedOrigins.contains(where: { $0.host == host }) { return }
        throw .hostNotAllowed(header)
    }

    /// The common `Host` values, checked on the bytes: `localhost`, `127.0.0.1` or `[::1]`, with or
    /// without a port. Anything else takes the full parse above.
    static func isPlainLoopback(_ header: String) -> Bool {
        var header = header
        return header.withUTF8 { bytes in
            var hostEnd = bytes.count
            if let colon = bytes.lastIndex(of: UInt8(ascii: ":")), bytes.last != UInt8(ascii: "]") {
                let port = bytes[(colon + 1)...]
                guard (1...5).contains(port.count), port.allSatisfy({ (0x30...0x39).contains($0) }) else { return false }
                hostEnd = colon
            }
            let host = UnsafeBufferPointer(rebasing: bytes[..<hostEnd])
            return host.elementsEqual("localhost".utf8) || host.elementsEqual("127.0.0.1".utf8)
                || host.elementsEqual("[::1]".utf8)
        }
    }
}
