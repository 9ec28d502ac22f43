#if canImport(Glibc)
import Glibc
#endif

extension MicroHTTPDDaemon {
    /// A bound address as raw `sockaddr_in`/`sockaddr_in6` bytes.
    struct SocketAddress {
        var storage: [UInt8]
        var isIPv6: Bool
    }

    /// Parses a numeric IPv4/IPv6 host (or `localhost`) into a socket address. The corresponding C function is `inet_pton`.
    static func socketAddress(host: String, port: UInt16) throws(TransportError) -> SocketAddress {
        let name = host == "localhost" ? "127.0.0.1" : host
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, name, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            return SocketAddress(storage: withUnsafeBytes(of: v4) { Array($0) }, isIPv6: false)
        }
        var v6 = sockaddr_in6()
        let bare = name.hasPrefix("[") && name.hasSuffix("]") ? String(name.dropFirst().dropLast()) : name
        if inet_pton(AF_INET6, bare, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            return SocketAddress(storage: withUnsafeBytes(of: v6) { Array($0) }, isIPv6: true)
        }
        throw .invalidHost(host)
    }
}
