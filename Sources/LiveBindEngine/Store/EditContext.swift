/// What the edit of a single-edit commit (`Store.set`, `insert`, …) needs besides the document: the
/// model's rules and how much it may still grow.
struct EditContext {
    /// The model's validation rules, `nil` when it has none.
    let rules: [ValidationRule]?
    let maxDepth: Int
    /// The model's counted size before the edit, and that of all models.
    let modelSize: Int, totalSize: Int
    /// How many bytes the model may grow by.
    let room: Int

    @inline(__always)
    init(limits: StoreLimits, rules: [ValidationRule]?, modelSize: Int, totalSize: Int) {
        self.rules = rules
        maxDepth = limits.maxDepth
        self.modelSize = modelSize
        self.totalSize = totalSize
        room = min(limits.maxModelBytes - modelSize, limits.maxStoreBytes - totalSize)
    }

    /// The counted size of `value` written `level` components below the root; checks its depth.
    @inline(__always)
    func measure(_ value: JSON, at level: Int) throws(StoreError) -> Int {
        try value.measure(at: level, maxDepth: maxDepth)
    }

    /// `edit`'s change, after checking that the model may grow by its size change (set in `sizeDelta`);
    /// a refused edit is undone in `document` first.
    func admit(
        _ edit: JSON.Edit?, adding size: Int, to document: inout JSON, sizeDelta: inout Int,
        limits: StoreLimits
    ) throws(StoreError)
        -> Change?
    {
        guard let edit else { return nil }
        var measured = 0
        sizeDelta = edit.undo.sizeChange(adding: size, modelSize: modelSize, measured: &measured)
        if sizeDelta > room {
            document.undo(edit.undo)
            throw refusal(growingBy: sizeDelta, limits: limits)
        }
        return edit.change
    }

    /// The error for an edit that would grow the model by `delta`, past `room`.
    func refusal(growingBy delta: Int, limits: StoreLimits) -> StoreError {
        limits.refusal(modelSize: modelSize + delta, storeSize: totalSize + delta)
            ?? .limitExceeded(.storeSize, limit: limits.maxStoreBytes, actual: totalSize + delta)
    }
}

extension StoreState {
    /// Checks that a model of `oldSize` bytes (`nil`: a new model) may become `newSize` bytes; shrinking
    /// is always allowed. Returns how much the store's total changes.
    func checkGrowth(to newSize: Int, from oldSize: Int?, limits: StoreLimits) throws(StoreError) -> Int {
        let delta = newSize - (oldSize ?? -StoreLimits.modelOverhead)
        guard delta > 0 else { return delta }
        if let refusal = limits.refusal(modelSize: newSize, storeSize: totalSize + delta) { throw refusal }
        return delta
    }
}
