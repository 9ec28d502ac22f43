/// Edits one model inside a `Store.write` call: every edit is applied at once, and the whole write is
/// committed as one unit (one sequence number) or, if any edit throws, rolled back completely.
///
/// > Important: The editor runs while the store is locked. Do not call the store from inside `write`.
public struct ModelEditor {
    var document: JSON
    var changes: [Change]
    var undoLog: [UndoStep]
    var appendedIndex: Int?

    init(document: JSON, changes: [Change], undoLog: [UndoStep]) {
        self.document = document
        self.changes = changes
        self.undoLog = undoLog
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
        record(try document.applySet(value, at: path))
    }

    /// Removes the object member or array element at `path`.
    public mutating func remove(at path: Path) throws(StoreError) {
        record(try document.applyRemove(at: path))
    }

    /// Inserts `value` into the array at `array` so that it ends up at `index` (`0...count`).
    public mutating func insert(_ value: JSON, at index: Int, in array: Path) throws(StoreError) {
        record(try document.applyInsert(value, at: index, in: array))
    }

    /// Appends `value` to the array at `array` and returns its index.
    @discardableResult
    public mutating func append(_ value: JSON, to array: Path) throws(StoreError) -> Int {
        let edit = try document.applyInsert(value, at: nil, in: array)
        record(edit)
        return edit.change.index!
    }

    /// Replaces the element at `index` of the array at `array`. An equal value changes nothing.
    public mutating func replace(at index: Int, in array: Path, with value: JSON) throws(StoreError) {
        record(try document.applyReplace(at: index, in: array, with: value))
    }

    /// Moves the element at `from` of the array at `array` so that it ends up at `to`.
    public mutating func move(from: Int, to: Int, in array: Path) throws(StoreError) {
        record(try document.applyMove(from: from, to: to, in: array))
    }

    private mutating func record(_ edit: JSON.Edit?) {
        guard let edit else { return }
        if edit.change.kind == .insert { appendedIndex = edit.change.index }
        changes.append(edit.change)
        undoLog.append(edit.undo)
    }
}
