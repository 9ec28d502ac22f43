/// What a store's models may become: checked on the result of every write, inside its commit, so a
/// write that would pass a limit is refused whole and changes nothing.
///
/// The defaults suit an operator who has not thought about it: Firebase allows 32 levels of nesting,
/// here 64; a model of 16 MiB takes a browser about a second to parse.
public struct StoreLimits: Sendable, Equatable {
    /// Deepest nesting of a stored document: the root object is level 1, a container inside it 2, and
    /// so on. At most ``depthCeiling``, so that encoding, comparing and freeing values never recurse deeply.
    public var maxDepth: Int = 64
    /// Largest size of one model, in bytes of its compact JSON (see ``Store/size(of:)``).
    public var maxModelBytes: Int = 16 << 20
    /// Largest size of all models together: their compact JSON plus ``modelOverhead`` bytes for each
    /// model, so that millions of empty models cannot fill the memory.
    public var maxStoreBytes: Int = 256 << 20
    /// Most operations in one JSON Patch.
    public var maxPatchOperations: Int = 1_000

    /// The highest `maxDepth` a store accepts: JSON text is parsed up to 512 levels, and a JSON Patch
    /// wraps its values in two more.
    public static let depthCeiling = 500

    /// What each model adds to the store's total besides its JSON: its name, entry and bookkeeping.
    public static let modelOverhead = 1_024

    /// The defaults.
    public init() {}

    /// The refusal of a write that leaves one model at `modelSize` bytes and the store at `storeSize`
    /// (``maxModelBytes`` first, then ``maxStoreBytes``); nil when both fit. Every size check of the
    /// store ends here.
    func refusal(modelSize: Int, storeSize: Int) -> StoreError? {
        if modelSize > maxModelBytes { return .limitExceeded(.modelSize, limit: maxModelBytes, actual: modelSize) }
        if storeSize > maxStoreBytes { return .limitExceeded(.storeSize, limit: maxStoreBytes, actual: storeSize) }
        return nil
    }

    /// How much one write may measure in all (values added plus values replaced or removed): four times
    /// ``maxModelBytes``. It bounds a JSON Patch that copies or moves large values over and over.
    var maxWriteWork: Int { maxModelBytes.multipliedReportingOverflow(by: 4).overflow ? .max : maxModelBytes * 4 }
}

/// Which of the ``StoreLimits`` a write would pass.
public enum StoreLimit: String, Sendable, Equatable, CustomStringConvertible {
    /// ``StoreLimits/maxDepth``.
    case depth
    /// ``StoreLimits/maxModelBytes``.
    case modelSize
    /// ``StoreLimits/maxStoreBytes``.
    case storeSize
    /// ``StoreLimits/maxPatchOperations``.
    case patchOperations
    /// Four times ``StoreLimits/maxModelBytes`` measured by one write.
    case writeWork

    /// The `StoreLimits` member that sets it.
    public var description: String {
        switch self {
        case .depth: "maxDepth"
        case .modelSize: "maxModelBytes"
        case .storeSize: "maxStoreBytes"
        case .patchOperations: "maxPatchOperations"
        case .writeWork: "maxModelBytes"
        }
    }
}
