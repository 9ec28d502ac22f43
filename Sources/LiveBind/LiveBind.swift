@_exported import LiveBindEngine
/// LiveBind: named JSON models with key-value coding, observation and bindings, served live over HTTP.
public enum LiveBindVersion {
    /// The version of the library and the server: `--version`, `/healthz`, the `Server` header and
    /// the Debian package (`make deb` reads it from this line) all take it from here.
    public static let string = "0.1.0"
    /// The `Server` header every answer carries.
    package static let serverHeader = "LiveBind/\(string)"
}
