/// One end of a binding: a key path inside a named model, written `model.dotted.path`.
public struct BindingEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The model's name (the first component of the dotted form).
    public var model: String
    /// The key path inside the model.
    public var path: Path

    /// An endpoint from its parts.
    public init(model: String, path: Path) {
        self.model = model
        self.path = path
    }

    /// Parses `"sensor.readings.3.value"`: the first component names the model, the rest is the path.
    public init(parsing text: String) throws(BindingError) {
        guard let dot = text.firstIndex(of: ".") else {
            guard !text.isEmpty else { throw .invalidSpec(position: "", reason: "is empty; expected model.path") }
            self.init(model: text, path: .root)
            return
        }
        let model = String(text[..<dot])
        guard !model.isEmpty else {
            throw .invalidSpec(position: "", reason: "'\(text)' has no model name before the first dot")
        }
        do {
            self.init(model: model, path: try Path(dotted: String(text[text.index(after: dot)...])))
        } catch {
            throw .invalidSpec(position: "", reason: "'\(text)' is not a valid key path: \(error)")
        }
    }

    /// `model.dotted.path` (just `model` for the root).
    public var description: String {
        path.components.isEmpty ? model : model + "." + path.dotted
    }

    /// Whether a change at `other` can alter the value here, or a write here alters `other`.
    func overlaps(_ other: BindingEndpoint) -> Bool {
        model == other.model && (path.isPrefix(of: other.path) || other.path.isPrefix(of: path))
    }

    /// Whether a change at `changed` (in this model) can alter the value here.
    func isTouched(by changed: Path) -> Bool {
        path.isPrefix(of: changed) || changed.isPrefix(of: path)
    }
}

/// Builds paths from components without depending on a particular `Path` initializer.
enum BindingPaths {
    /// The path with these components.
    static func make(_ components: some Sequence<String>) -> Path {
        components.reduce(Path.root) { $0.appending($1) }
    }
}
