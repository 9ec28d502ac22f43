/// Which way values flow through a binding.
public enum BindingMode: String, Sendable, Hashable {
    /// Source to target only.
    case oneWay
    /// Both ways; the transform must have a reverse.
    case twoWay
}
