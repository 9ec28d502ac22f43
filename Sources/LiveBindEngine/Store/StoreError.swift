/// Why a store operation failed. A failed write leaves the model, its revision and the sequence untouched.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No model has this name.
    case modelNotFound(String)
    /// Model names are 1 to 128 characters from `A-Z a-z 0-9 _ . -`.
    case invalidModelName(String)
    /// Nothing exists at this path (a missing member, or a missing parent of a member to create).
    case pathNotFound(Path)
    /// The value at `path` has the wrong JSON type for the operation.
    case typeMismatch(path: Path, expected: String, found: String)
    /// An array index outside the valid range.
    case indexOutOfRange(path: Path, index: Int, count: Int)
    /// The write asked for a revision (`ifRevision`) the model no longer has.
    case revisionMismatch(expected: UInt64, actual: UInt64)
    /// A JSON Patch `test` operation found a different value.
    case testFailed(path: Path)
    /// A JSON Patch document is malformed.
    case invalidPatch(String)
    /// A value that cannot be stored (such as a non-finite number).
    case invalidValue(String)
    /// A binding's validation rejected the value.
    case validationFailed(path: Path, reason: String)
    /// A key path or pointer could not be parsed.
    case invalidPath(PathError)
    /// The write could not be made durable (the data directory failed); nothing changed.
    case storageFailed(String)
    /// The write would take a model past one of the store's ``StoreLimits``: `actual` is what it would
    /// reach (at least), `limit` the limit's value. Nothing changed.
    case limitExceeded(StoreLimit, limit: Int, actual: Int)

    /// A message saying what is wrong, with its context.
    public var description: String {
        switch self {
        case .modelNotFound(let name):
            "no model named \"\(name)\""
        case .invalidModelName(let name):
            "invalid model name \"\(name)\": use 1 to 128 characters from A-Z a-z 0-9 _ - (no dots)"
        case .pathNotFound(let path):
            "nothing at path \"\(path)\""
        case .typeMismatch(let path, let expected, let found):
            "expected \(expected) at path \"\(path)\" but found \(found)"
        case .indexOutOfRange(let path, let index, let count):
            "index \(index) is out of range for the array at \"\(path)\" with \(count) elements"
        case .revisionMismatch(let expected, let actual):
            "revision mismatch: expected \(expected) but the model is at revision \(actual); re-read and retry"
        case .testFailed(let path):
            "JSON Patch test failed: the value at \"\(path)\" differs"
        case .invalidPatch(let reason):
            "invalid patch: \(reason)"
        case .invalidValue(let reason):
            "invalid value: \(reason)"
        case .validationFailed(let path, let reason):
            "validation failed at \"\(path)\": \(reason)"
        case .invalidPath(let error):
            error.description
        case .storageFailed(let reason):
            "the write could not be stored durably, so it was not made: \(reason)"
        case .limitExceeded(let limit, let value, let actual):
            Self.describe(limit, value, actual)
        }
    }
}

extension StoreError {
    private static func describe(_ limit: StoreLimit, _ value: Int, _ actual: Int) -> String {
        switch limit {
        case .depth:
            "the write would nest containers \(actual) levels deep; the limit is \(value) (\(limit))"
        case .modelSize:
            "the write would make the model \(actual) bytes of JSON; the limit is \(value) bytes (\(limit))"
        case .storeSize:
            "the write would make all models together \(actual) bytes of JSON; the limit is \(value) bytes (\(limit))"
        case .patchOperations:
            "the JSON Patch has \(actual) operations; the limit is \(value) (\(limit))"
        case .writeWork:
            "the write copies, moves or replaces more than \(value) bytes of values in all; split it into smaller writes"
        }
    }
}
