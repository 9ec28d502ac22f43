internal import CGnuTLS
#if canImport(Glibc)
import Glibc
#endif
internal import LiveBindEngine

/// The certificates of the TLS daemons in this process, by the port each listens on, and the GnuTLS
/// callback that picks one at each handshake.
///
/// libmicrohttpd hands GnuTLS's certificate-retrieve callback through (`MHD_OPTION_HTTPS_CERT_CALLBACK`)
/// without a context pointer; the session's transport is the connection's socket, whose local port
/// names the daemon. Asking for the certificate at every handshake is what lets one be replaced while
/// the server runs (`replace`): new handshakes get the new one, open connections keep theirs.
enum MicroHTTPDCertificates {
    /// What a port serves, and the certificates it served before, which stay alive because GnuTLS
    /// may still read them for sessions made with them. One is retired per reload.
    private struct Entry {
        /// The daemon serving it.
        let owner: ObjectIdentifier
        var current: MicroHTTPDCertificate
        var retired: [MicroHTTPDCertificate] = []
    }

    private static let entries = OrderedMutex<[UInt16: Entry]>([:])

    /// Serves `certificate` on `port` from now on, for the daemon `owner`.
    static func install(_ certificate: MicroHTTPDCertificate, port: UInt16, owner: ObjectIdentifier) {
        entries.withLock { entries in
            if var entry = entries[port], entry.owner == owner {
                entry.retired.append(entry.current)
                entry.current = certificate
                entries[port] = entry
            } else {
                entries[port] = Entry(owner: owner, current: certificate)
            }
        }
    }

    /// Forgets `port` if `owner` still serves it: its daemon has stopped, so no session uses its
    /// certificates any more. (Another daemon may have the port by now: its entry stays.)
    static func remove(port: UInt16, owner: ObjectIdentifier) {
        entries.withLock { entries in
            if entries[port]?.owner == owner { entries[port] = nil }
        }
    }

    /// The certificate served on `port`.
    static func current(port: UInt16) -> MicroHTTPDCertificate? {
        entries.withLock { $0[port]?.current }
    }

    /// The local port of socket `fd`, or nil. The corresponding C function is `getsockname`.
    static func localPort(of fd: Int32) -> UInt16? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let found = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard found == 0 else { return nil }
        return withUnsafePointer(to: storage) { pointer in
            if Int32(storage.ss_family) == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
    }
}

// MARK: - C callback trampoline --------------------------------------------------------------------

/// GnuTLS asks which certificate and key to present. Called on a libmicrohttpd worker thread during a
/// handshake. Returns -1 (the handshake fails) when the port has no certificate.
let certificateRetrieveTrampoline:
    @convention(c) (
        gnutls_session_t?, UnsafePointer<gnutls_datum_t>?, Int32, UnsafePointer<gnutls_pk_algorithm_t>?, Int32,
        UnsafeMutablePointer<UnsafeMutablePointer<gnutls_pcert_st>?>?, UnsafeMutablePointer<UInt32>?,
        UnsafeMutablePointer<gnutls_privkey_t?>?
    ) -> Int32 = { session, _, _, _, _, chain, count, key in
        guard let session, let chain, let count, let key,
            let port = MicroHTTPDCertificates.localPort(of: gnutls_transport_get_int(session)),
            let certificate = MicroHTTPDCertificates.current(port: port)
        else { return -1 }
        chain.pointee = certificate.chain
        count.pointee = certificate.count
        key.pointee = certificate.key
        return 0
    }
