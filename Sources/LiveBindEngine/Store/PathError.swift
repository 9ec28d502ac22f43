/// Why a key path or JSON Pointer could not be parsed.
public enum PathError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A JSON Pointer that is neither empty nor starts with `/`.
    case missingLeadingSlash(pointer: String)
    /// A `~` in a JSON Pointer not followed by `0` (for `~`) or `1` (for `/`); `offset` counts Unicode scalars.
    case invalidEscape(pointer: String, offset: Int)
    /// A dotted path with an empty component (`a..b`, `.a`, `a.`); `index` is the component's position.
    case emptyComponent(dotted: String, index: Int)

    /// A message saying what is wrong and how to write it instead.
    public var description: String {
        switch self {
        case .missingLeadingSlash(let pointer):
            "JSON Pointer \"\(pointer)\" must be empty or start with \"/\""
        case .invalidEscape(let pointer, let offset):
            "JSON Pointer \"\(pointer)\" has an invalid escape at character \(offset): write \"~0\" for \"~\" and \"~1\" for \"/\""
        case .emptyComponent(let dotted, let index):
            "key path \"\(dotted)\" has an empty component at position \(index); use \"\" for the root and no leading, trailing or doubled dots"
        }
    }
}
