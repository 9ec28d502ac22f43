#if canImport(Glibc)
import Glibc
#endif
import LiveBindEngine
internal import LiveBindHTTP

/// The reverse proxies whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed (`--trust-proxy`).
///
/// A request whose TCP peer is one of them takes its client address and scheme from those headers;
/// from any other peer the headers are ignored, so a client cannot claim another address or https.
struct TrustedProxies: Sendable {
    /// The proxies' addresses, in canonical form (`inet_ntop`'s, IPv4-mapped IPv6 as IPv4).
    let addresses: Set<String>

    /// Parses numeric IPv4 or IPv6 addresses; throws with the first that is not one.
    init(_ addresses: [String]) throws(ServerError) {
        var canonical: Set<String> = []
        for address in addresses {
            guard let form = Self.canonical(address) else { throw .invalidTrustedProxy(address) }
            canonical.insert(form)
        }
        self.addresses = canonical
    }

    /// Whether no proxy is trusted.
    var isEmpty: Bool { addresses.isEmpty }

    /// Replaces the request's client address and scheme with what a trusted proxy forwarded.
    ///
    /// `X-Forwarded-For` is read from the right, the end the trusted proxy appended to: the first
    /// address that is not itself a trusted proxy is the client. An entry that is not an address stops
    /// the walk (the address before it stands). `X-Forwarded-Proto` counts when it says `http` or `https`.
    func apply(to request: inout HTTPRequest) {
        guard let peer = request.clientAddress.flatMap(Self.canonical), addresses.contains(peer) else { return }
        var client = peer
        if let forwarded = request.headers["X-Forwarded-For"] {
            for entry in forwarded.split(separator: ",").reversed() {
                guard let address = Self.canonical(entry.trimmingWhitespace()) else { break }
                client = address
                if !addresses.contains(address) { break }
            }
        }
        request.clientAddress = client
        if let proto = request.headers["X-Forwarded-Proto"]?.split(separator: ",").last?.trimmingWhitespace().lowercased(),
            proto == "http" || proto == "https"
        {
            request.scheme = proto
        }
    }

    /// The canonical text of a numeric address, or nil when `text` is not one. The corresponding C
    /// functions are `inet_pton` and `inet_ntop`.
    static func canonical(_ text: String) -> String? {
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return format(AF_INET, &v4) }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return bytes[12..<16].map(String.init).joined(separator: ".")
        }
        return format(AF_INET6, &v6)
    }

    private static func format(_ family: Int32, _ address: UnsafeRawPointer) -> String? {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        guard inet_ntop(family, address, &text, socklen_t(text.count)) != nil, let end = text.firstIndex(of: 0) else { return nil }
        return String(decoding: text[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
