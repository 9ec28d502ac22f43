extension ModelEditor {
    /// Applies an RFC 6902 JSON Patch (an array of `add`, `remove`, `replace`, `move`, `copy` and `test`
    /// operations) in order. Inside `Store.write` or `Store.jsonPatch` the patch is all-or-nothing.
    public mutating func jsonPatch(_ operations: JSON) throws(StoreError) {
        guard case .array(let list) = operations else {
            throw .invalidPatch("a JSON Patch must be an array of operations, not \(operations.typeName)")
        }
        guard list.count <= limits.maxPatchOperations else {
            throw .limitExceeded(.patchOperations, limit: limits.maxPatchOperations, actual: list.count)
        }
        for (number, operation) in list.enumerated() {
            try apply(PatchOperation(operation, number: number))
        }
    }

    private mutating func apply(_ operation: PatchOperation) throws(StoreError) {
        switch operation.op {
        case "add":
            try add(operation.requiredValue(), at: operation.path)
        case "remove":
            try remove(at: operation.path)
        case "replace":
            let value = try operation.requiredValue()
            _ = try document.value(at: operation.path)  // must exist
            try set(value, at: operation.path)
        case "move":
            let from = try operation.requiredFrom()
            try move(from: from, to: operation.path, number: operation.number)
        case "copy":
            let value = try document.value(at: operation.requiredFrom())
            try add(value, at: operation.path)
        case "test":
            let expected = try operation.requiredValue()
            guard let actual = try? document.value(at: operation.path), actual == expected else {
                throw .testFailed(path: operation.path)
            }
        default:
            throw .invalidPatch("operation \(operation.number): unknown op \"\(operation.op)\"")
        }
    }

    /// RFC 6902 `add`: into an array it inserts (at an index or `-`); into an object it creates or replaces.
    private mutating func add(_ value: JSON, at path: Path) throws(StoreError) {
        guard let key = path.last, let parentPath = path.parent else {
            try set(value, at: path)
            return
        }
        guard let count = try arrayCount(at: parentPath) else {
            try set(value, at: path)
            return
        }
        guard let index = key == "-" ? count : Path.arrayIndex(key) else { throw .pathNotFound(path) }
        try insert(value, at: index, in: parentPath)
    }

    /// RFC 6902 `move`: a move inside one array is one `move` change; otherwise a remove and an add.
    private mutating func move(from: Path, to path: Path, number: Int) throws(StoreError) {
        if from == path {
            _ = try document.value(at: from)
            return
        }
        guard !from.isPrefix(of: path) else {
            throw .invalidPatch("operation \(number): cannot move \"\(from)\" into its own child \"\(path)\"")
        }
        if let fromParent = from.parent, fromParent == path.parent, let count = try arrayCount(at: fromParent),
            let source = from.last.flatMap(Path.arrayIndex), let key = path.last
        {
            // After removing the source the array has count - 1 elements; "-" is its end.
            guard let target = key == "-" ? count - 1 : Path.arrayIndex(key) else { throw .pathNotFound(path) }
            guard source < count else { throw .indexOutOfRange(path: fromParent, index: source, count: count) }
            guard target < count else { throw .indexOutOfRange(path: fromParent, index: target, count: count - 1) }
            try move(from: source, to: target, in: fromParent)
            return
        }
        let value = try document.value(at: from)
        try remove(at: from)
        try add(value, at: path)
    }

    /// The element count when the value at `path` is an array, `nil` when it is something else.
    private func arrayCount(at path: Path) throws(StoreError) -> Int? {
        try document.value(at: path).arrayValue?.count
    }
}

/// One decoded JSON Patch operation.
private struct PatchOperation {
    let number: Int
    let op: String
    let path: Path
    let members: [String: JSON]

    init(_ operation: JSON, number: Int) throws(StoreError) {
        guard case .object(let members) = operation else {
            throw .invalidPatch("operation \(number) must be an object, not \(operation.typeName)")
        }
        guard case .string(let op)? = members["op"] else {
            throw .invalidPatch("operation \(number) needs an \"op\" string")
        }
        guard case .string(let pointer)? = members["path"] else {
            throw .invalidPatch("operation \(number) (\(op)) needs a \"path\" string")
        }
        self.number = number
        self.op = op
        self.path = try Self.parse(pointer, number: number)
        self.members = Dictionary(uniqueKeysWithValues: members.map { ($0.key, $0.value) })
    }

    func requiredValue() throws(StoreError) -> JSON {
        guard let value = members["value"] else {
            throw .invalidPatch("operation \(number) (\(op)) needs a \"value\"")
        }
        return value
    }

    func requiredFrom() throws(StoreError) -> Path {
        guard case .string(let pointer)? = members["from"] else {
            throw .invalidPatch("operation \(number) (\(op)) needs a \"from\" string")
        }
        return try Self.parse(pointer, number: number)
    }

    private static func parse(_ pointer: String, number: Int) throws(StoreError) -> Path {
        do {
            return try Path(pointer: pointer)
        } catch {
            throw .invalidPatch("operation \(number): \(error)")
        }
    }
}
