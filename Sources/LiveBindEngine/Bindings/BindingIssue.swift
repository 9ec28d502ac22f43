/// One invalid entry of a binding spec or definition file: where it is and what is wrong.
public struct BindingIssue: Sendable, Equatable, CustomStringConvertible {
    /// Where, e.g. `bindings[2].transform` or `models.sensor`.
    public var position: String
    /// What is wrong, in words a user can act on.
    public var reason: String

    /// An issue from its parts.
    public init(position: String, reason: String) {
        self.position = position
        self.reason = reason
    }

    /// `position: reason`.
    public var description: String { position.isEmpty ? reason : "\(position): \(reason)" }

    /// The issue of a thrown error, placed at `position` (a spec error's own position is appended).
    static func from(_ error: BindingError, at position: String) -> BindingIssue {
        if case .invalidSpec(let inner, let reason) = error {
            return BindingIssue(position: join(position, inner), reason: reason)
        }
        if case .invalidParameter(_, let parameter, _) = error {
            return BindingIssue(position: join(position, parameter), reason: error.description)
        }
        if case .queryTooLarge(_, let parameter, _, _) = error {
            return BindingIssue(position: join(position, parameter), reason: error.description)
        }
        return BindingIssue(position: position, reason: error.description)
    }

    /// `outer.inner`, leaving out empty parts.
    static func join(_ outer: String, _ inner: String) -> String {
        if outer.isEmpty { return inner }
        if inner.isEmpty { return outer }
        return outer + "." + inner
    }
}
