/// Why the transport cannot serve: a host it cannot bind, a port it cannot listen on, a certificate or
/// key it cannot use. The server reports each as its own error of the same name, with its message.
package enum TransportError: Error, Equatable {
    /// The host is not a numeric IPv4/IPv6 address or `localhost`.
    case invalidHost(String)
    /// libmicrohttpd could not listen (port taken, permission, too few file descriptors).
    case cannotListen(host: String, port: Int)
    /// The libmicrohttpd in use was built without TLS (GnuTLS).
    case tlsUnsupported
    /// A certificate or key file is missing, not a file, too large or cannot be read.
    case tlsFileUnreadable(path: String, reason: String)
    /// The certificate file holds no PEM certificate GnuTLS accepts.
    case tlsInvalidCertificate(path: String, reason: String)
    /// The key file holds no PEM private key GnuTLS accepts (an encrypted key is not supported).
    case tlsInvalidKey(path: String, reason: String)
    /// The private key is not the key of the certificate.
    case tlsKeyMismatch(certificate: String, key: String)
}
