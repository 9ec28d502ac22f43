/// LiveBind: named JSON models with key-value coding, observation and bindings, served live over HTTP.
public enum LiveBindVersion {
    /// The library's version.
    public static let string = "0.1.0"
}
