import LiveBindEngine
internal import LiveBindHTTP
/// Errors of the server layer that are not HTTP answers: starting, binding, configuration.
public enum ServerError: Error, Equatable, CustomStringConvertible {
    /// A setting holds a value it does not take (see ``LiveBindServer/Configuration/validate()``).
    case invalidConfiguration(ConfigurationError)
    /// The host is not a numeric IPv4/IPv6 address or `localhost`.
    case invalidHost(String)
    /// libmicrohttpd could not listen (port taken, permission, too few file descriptors).
    case cannotListen(host: String, port: Int)
    /// The public directory does not exist or is not a directory.
    case publicDirectoryMissing(String)
    /// `start()` was called on a server that is running.
    case alreadyRunning
    /// The access policy cannot be used (private reads without tokens, a bad token or origin).
    case invalidAccessPolicy(String)
    /// A tokens file is malformed; `entry` counts from 1 (nil: the whole file), `name` is the entry's label.
    case invalidTokensFile(entry: Int?, name: String?, reason: String)
    /// The data directory cannot be created, opened, locked, written or read back.
    case dataDirectoryUnusable(String)
    /// Only one of the certificate and the key was given: TLS needs both.
    case tlsIncomplete
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
    /// A `--trust-proxy` value is not a numeric IPv4 or IPv6 address.
    case invalidTrustedProxy(String)
    /// `reloadCertificate()` was called on a server that is not running with TLS.
    case tlsNotRunning
    /// The cluster's NATS servers or stream cannot be reached or loaded (`--cluster`).
    case clusterUnavailable(String)

    /// A message a user can act on.
    public var description: String {
        switch self {
        case .invalidConfiguration(let error):
            error.description
        case .invalidHost(let host):
            "invalid host '\(host)': use a numeric address such as 127.0.0.1, 0.0.0.0 or ::1, or localhost"
        case .cannotListen(let host, let port):
            "cannot listen on \(host):\(port): is the port in use (try --port 0 or another port), or is the open-file limit too low?"
        case .publicDirectoryMissing(let path):
            "public directory '\(path)' does not exist: pass --public with the folder holding index.html"
        case .alreadyRunning:
            "the server is already running"
        case .invalidAccessPolicy(let reason):
            "access: \(reason)"
        case .invalidTokensFile(let entry, let name, let reason):
            "tokens file" + (entry.map { " entry \($0)" } ?? "") + (name.map { " (\"\($0)\")" } ?? "") + ": \(reason)"
        case .dataDirectoryUnusable(let reason):
            "cannot use the data directory: \(reason)"
        case .tlsIncomplete:
            "TLS needs both a certificate and its key: pass --tls-cert FILE and --tls-key FILE"
        case .tlsUnsupported:
            "this libmicrohttpd was built without TLS: install Debian's libmicrohttpd12 (it links GnuTLS) or serve plain HTTP behind a proxy"
        case .tlsFileUnreadable(let path, let reason):
            "cannot read '\(path)': \(reason)"
        case .tlsInvalidCertificate(let path, let reason):
            "'\(path)' is not a PEM certificate (-----BEGIN CERTIFICATE-----): \(reason)"
        case .tlsInvalidKey(let path, let reason):
            "'\(path)' is not an unencrypted PEM private key (-----BEGIN PRIVATE KEY-----): \(reason)"
        case .tlsKeyMismatch(let certificate, let key):
            "the key in '\(key)' does not belong to the certificate in '\(certificate)': pass the key the certificate was issued for"
        case .invalidTrustedProxy(let address):
            "trusted proxy '\(address)' is not a numeric IPv4 or IPv6 address (such as 127.0.0.1 or ::1)"
        case .tlsNotRunning:
            "the server is not running with TLS: there is no certificate to reload"
        case .clusterUnavailable(let reason):
            "cannot join the cluster: \(reason); check --cluster (nats://host:port of running nats-server with JetStream)"
        }
    }
}

extension ServerError {
    /// The transport's failure as the server reports it: the case of the same name.
    init(_ error: TransportError) {
        self =
            switch error {
            case .invalidHost(let host): .invalidHost(host)
            case .cannotListen(let host, let port): .cannotListen(host: host, port: port)
            case .tlsUnsupported: .tlsUnsupported
            case .tlsFileUnreadable(let path, let reason): .tlsFileUnreadable(path: path, reason: reason)
            case .tlsInvalidCertificate(let path, let reason): .tlsInvalidCertificate(path: path, reason: reason)
            case .tlsInvalidKey(let path, let reason): .tlsInvalidKey(path: path, reason: reason)
            case .tlsKeyMismatch(let certificate, let key): .tlsKeyMismatch(certificate: certificate, key: key)
            }
    }
}
