/// Edits one model inside a `Store.write` call: every edit is applied at once, and the whole write is
/// committed as one unit (one sequence number) or, if any edit throws, rolled back completely.
///
/// Each edit passes the model's validation rules and the store's limits (``StoreLimits``) as it is
/// made: an edit that would take the model past a limit throws `limitExceeded`, and so undoes the write.
///
/// > Important: The editor runs while the store is locked. Do not call the store from inside `write`.
public struct ModelEditor {
    var document: JSON
    var changes: [Change]
    var undoLog: [UndoStep]
    var appendedIndex: Int?
    let limits: StoreLimits
    /// The model's validation rules (empty for most models).
    let rules: [ValidationRule]
    /// The model's counted size before the write, and that of every other model together.
    let baseSize: Int, othersSize: Int
    /// How much the edits so far changed the model's counted size.
    var sizeDelta = 0
    /// Bytes of values measured so far (written, replaced and removed), against `limits.maxWriteWork`.
    var measured = 0

    init(
        document: JSON, changes: [Change], undoLog: [UndoStep], limits: StoreLimits = StoreLimits(),
        rules: [ValidationRule] = [], baseSize: Int = 0, othersSize: Int = 0
    ) {
        self.document = document
        self.changes = changes
        self.undoLog = undoLog
        self.limits = limits
        self.rules = rules
        self.baseSize = baseSize
        self.othersSize = othersSize
    }

    /// The whole document as edited so far.
    public var value: JSON { document }

    /// The value at `path` as edited so far.
    public func value(at path: Path) throws(StoreError) -> JSON {
        try document.value(at: path)
    }

    /// Sets `value` at `path`: creates or replaces an object member, replaces an array element (a
    /// `replace` change), or appends when the last component is `-` or the array's count (an `insert`).
    /// Setting an equal value changes nothing. A missing parent is `pathNotFound`.
    public mutating func set(_ value: JSON, at path: Path) throws(StoreError) {
        let value = try validated(value, at: path)
        let size = try measure(value, at: path.components.count)
        try record(try document.applySet(value, at: path), adding: size)
    }

    /// Removes the object member or array element at `path`.
    public mutating func remove(at path: Path) throws(StoreError) {
        try record(try document.applyRemove(at: path), adding: 0)
    }

    /// Inserts `value` into the array at `array` so that it ends up at `index` (`0...count`).
    public mutating func insert(_ value: JSON, at index: Int, in array: Path) throws(StoreError) {
        let value = try validated(value, at: array.appending(String(index)))
        let size = try measure(value, at: array.components.count + 1)
        try record(try document.applyInsert(value, at: index, in: array), adding: size)
    }

    /// Appends `value` to the array at `array` and returns its index.
    @discardableResult
    public mutating func append(_ value: JSON, to array: Path) throws(StoreError) -> Int {
        var value = value
        if !rules.isEmpty, let count = try document.value(at: array).arrayValue?.count {
            value = try validated(value, at: array.appending(String(count)))
        }
        let size = try measure(value, at: array.components.count + 1)
        let edit = try document.applyInsert(value, at: nil, in: array)
        try record(edit, adding: size)
        return edit.change.index!
    }

    /// Replaces the element at `index` of the array at `array`. An equal value changes nothing.
    public mutating func replace(at index: Int, in array: Path, with value: JSON) throws(StoreError) {
        let value = try validated(value, at: array.appending(String(index)))
        let size = try measure(value, at: array.components.count + 1)
        try record(try document.applyReplace(at: index, in: array, with: value), adding: size)
    }

    /// Moves the element at `from` of the array at `array` so that it ends up at `to`.
    public mutating func move(from: Int, to: Int, in array: Path) throws(StoreError) {
        try record(try document.applyMove(from: from, to: to, in: array), adding: 0)
    }

    /// `value` as the model's rules let it be written at `path`.
    private func validated(_ value: JSON, at path: Path) throws(StoreError) -> JSON {
        rules.isEmpty ? value : try rules.validated(value, at: path, in: document)
    }

    /// The counted size of `value` written `level` components below the root; checks its depth.
    private mutating func measure(_ value: JSON, at level: Int) throws(StoreError) -> Int {
        let size = try value.measure(at: level, maxDepth: limits.maxDepth)
        measured += size
        try checkWork()
        return size
    }

    private func checkWork() throws(StoreError) {
        guard measured <= limits.maxWriteWork else {
            throw .limitExceeded(.writeWork, limit: limits.maxWriteWork, actual: measured)
        }
    }

    /// Keeps `edit`'s change and undo step, then checks the model's new size against the limits (a
    /// refusal leaves the step in the log, so that the rollback undoes this edit too).
    private mutating func record(_ edit: JSON.Edit?, adding size: Int) throws(StoreError) {
        guard let edit else { return }
        if edit.change.kind == .insert { appendedIndex = edit.change.index }
        changes.append(edit.change)
        undoLog.append(edit.undo)
        sizeDelta += edit.undo.sizeChange(adding: size, modelSize: baseSize + sizeDelta, measured: &measured)
        try checkWork()
        guard sizeDelta > 0 else { return }
        let modelSize = baseSize + sizeDelta
        if let refusal = limits.refusal(modelSize: modelSize, storeSize: othersSize + modelSize) { throw refusal }
    }
}
