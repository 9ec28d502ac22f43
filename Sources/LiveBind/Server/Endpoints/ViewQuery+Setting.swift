import LiveBindEngine
extension ViewQuery.Bound {
    /// The `livebind-server` flag (without dashes) that sets this bound.
    var setting: String {
        switch kind {
        case .terms: "max-view-terms"
        case .inValues: "max-view-in"
        case .bytes: "max-view-query-bytes"
        }
    }
}
