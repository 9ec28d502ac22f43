/// Errors of the server layer that are not HTTP answers: starting, binding, configuration.
public enum ServerError: Error, Equatable, CustomStringConvertible {
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

    /// A message a user can act on.
    public var description: String {
        switch self {
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
        }
    }
}
