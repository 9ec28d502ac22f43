/// What the edit of a single-edit commit (`Store.set`, `insert`, …) needs besides the document: the
/// model's rules and how much it may still grow.
struct EditContext {
    let limits: StoreLimits
    /// The model's validation rules, `nil` when it has none.
    let rules: [ValidationRule]?
    /// The model's counted size before the edit, and that of all models.
    let modelSize: Int, totalSize: Int

    /// How many bytes the model may grow by.
    var room: Int { min(limits.maxModelBytes - modelSize, limits.maxStoreBytes - totalSize) }

    /// `value` as the model's rules let it be written at `path` of `document`.
    @inline(__always)
    func validated(_ value: JSON, at path: @autoclosure () -> Path, in document: JSON) throws(StoreError) -> JSON {
        guard let rules else { return value }
        return try rules.validated(value, at: path(), in: document)
    }

    /// The counted size of `value` written `level` components below the root; checks its depth.
    @inline(__always)
    func measure(_ value: JSON, at level: Int) throws(StoreError) -> Int {
        try value.measure(at: level, maxDepth: limits.maxDepth)
    }

    /// `edit`'s change and size change, after checking that the model may grow by it; a refused edit is
    /// undone in `document` first.
    func admit(_ edit: JSON.Edit?, adding size: Int, to document: inout JSON) throws(StoreError)
        -> (change: Change, sizeDelta: Int)?
    {
        guard let edit else { return nil }
        var measured = 0
        let delta = edit.undo.sizeChange(adding: size, modelSize: modelSize, measured: &measured)
        if delta > room {
            document.undo(edit.undo)
            throw refusal(growingBy: delta)
        }
        return (edit.change, delta)
    }

    /// The error for an edit that would grow the model by `delta`, past `room`.
    func refusal(growingBy delta: Int) -> StoreError {
        if modelSize + delta > limits.maxModelBytes {
            return .limitExceeded(.modelSize, limit: limits.maxModelBytes, actual: modelSize + delta)
        }
        return .limitExceeded(.storeSize, limit: limits.maxStoreBytes, actual: totalSize + delta)
    }
}

extension StoreState {
    /// Checks that a model of `oldSize` bytes may become `newSize` bytes; shrinking is always allowed.
    func checkGrowth(to newSize: Int, from oldSize: Int, limits: StoreLimits) throws(StoreError) {
        guard newSize > oldSize else { return }
        guard newSize <= limits.maxModelBytes else {
            throw .limitExceeded(.modelSize, limit: limits.maxModelBytes, actual: newSize)
        }
        let total = totalSize + newSize - oldSize
        guard total <= limits.maxStoreBytes else { throw .limitExceeded(.storeSize, limit: limits.maxStoreBytes, actual: total) }
    }
}
