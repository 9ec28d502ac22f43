import DequeModule

/// An array controller's arranged objects: the elements of an array that a ``ViewQuery`` keeps, in
/// its order, from its offset, at most its limit, kept current as the array changes, **incrementally**.
///
/// Give it the array's changes (``apply(_:at:)``, as a store's observer gets them) and it returns what
/// they mean for the view, in view coordinates: an element that starts matching is an `insert`, one
/// that stops a `remove`, one whose sort key changed a `move` (and its `replace`), a change inside a
/// shown element that keeps its place the same change at its index in the view. Each change costs
/// O(log n) for n elements (expected; ties in every sort key add a factor of log n), not a re-filter
/// and re-sort: the elements are kept in two balanced trees, in array order and in view order.
///
/// ```swift
/// let view = try ArrangedArray(orders, query: ViewQuery(where: "status:eq:open", order: "-time", limit: 20))
/// let changes = view.apply(change, at: Path(["items"]))   // what a table bound to the view does
/// ```
///
/// Not thread-safe: its owner serializes the calls.
public final class ArrangedArray {
    public let query: ViewQuery
    private var content = ContentTree()
    private var arranged = ArrangedTree()
    /// Treap priorities from a seed of the system's generator: with a fixed one, a writer could choose
    /// sort keys in priority order and turn the trees into chains (O(n) per change, deep recursion).
    private var random = SplitMix(seed: UInt64.random(in: 0...UInt64.max))

    /// Arranges `elements` (an array's current content).
    public init(_ elements: some Sequence<JSON>, query: ViewQuery) {
        self.query = query
        for element in elements { insertContent(element, at: content.count) }
    }

    /// Elements in the array.
    package var contentCount: Int { content.count }
    /// Elements the filter keeps (before offset and limit).
    public var matchCount: Int { content.keptCount }

    /// The arranged elements shown: those from the offset, at most the limit.
    public var rows: [JSON] {
        let shown = window
        return shown.map { element(at: $0) }
    }

    /// The arranged indexes shown.
    private var window: Range<Int> {
        let count = matchCount
        let start = min(query.offset, count)
        let end = query.limit.map { min(count, start + $0) } ?? count
        return start..<end
    }

    /// The arranged element at `index` (0 ..< ``matchCount``).
    public func element(at index: Int) -> JSON {
        query.order.isEmpty ? content.keptRow(at: index).value : arranged.row(at: index).value
    }

    // MARK: Changes

    /// Applies a change of the array at `path` (a change at `path` itself, or inside one of its
    /// elements) and returns what it means for the shown rows, with paths at `path`: `insert`,
    /// `remove`, `move` and `replace` of rows, a change inside a shown row at its index, or one `set`
    /// of every shown row when the array itself was set. A change that does not fit the array it holds
    /// (an index out of range) changes nothing: when ``contentCount`` then differs from the array's
    /// length, the caller gives it the array again with ``reset(_:path:)``.
    public func apply(_ change: Change, at path: Path) -> [Change] {
        var out = Output(path: path)
        let depth = path.components.count
        if change.path == path {
            switch change.kind {
            case .insert:
                guard let index = change.index, let value = change.value, index >= 0, index <= content.count else { break }
                let arrangedIndex = insertContent(value, at: index)
                if let arrangedIndex { entered(arrangedIndex, &out) }
                return out.changes
            case .remove:
                guard let index = change.index else { return reset([], path: path) }  // the array itself
                guard index >= 0, index < content.count else { break }
                let row = content.row(at: index)
                let arrangedIndex = row.kept ? arrangedIndex(of: row) : nil
                removeContent(at: index)
                if let arrangedIndex { left(arrangedIndex, was: row.value, &out) }
                return out.changes
            case .replace:
                guard let index = change.index, let value = change.value, index >= 0, index < content.count else { break }
                update(content.row(at: index), to: value, inner: nil, &out)
                return out.changes
            case .move:
                guard let from = change.from, let to = change.to, from >= 0, from < content.count, to >= 0, to < content.count else {
                    break
                }
                move(from: from, to: to, &out)
                return out.changes
            case .set:
                return reset(change.value?.arrayValue ?? [], path: path)
            }
            return []
        }
        guard path.isPrefix(of: change.path), let index = Path.arrayIndex(change.path.components[depth]),
            index >= 0, index < content.count
        else { return [] }
        let row = content.row(at: index)
        var inner = change
        inner.path = Path(Array(change.path.components[(depth + 1)...]))
        var value = row.value
        guard (try? value.replay(inner)) != nil else { return [] }
        update(row, to: value, inner: inner, &out)
        return out.changes
    }

    /// Arranges `elements` anew (the array was replaced) and returns a `set` of the shown rows at `path`.
    public func reset(_ elements: some Sequence<JSON>, path: Path) -> [Change] {
        content = ContentTree()
        arranged = ArrangedTree()
        for element in elements { insertContent(element, at: content.count) }
        return [Change(kind: .set, path: path, value: .array(Deque(rows)))]
    }

    // MARK: Keeping the trees

    /// Puts a new element in the content at `index`; returns its arranged index when the view keeps it.
    @discardableResult
    private func insertContent(_ value: JSON, at index: Int) -> Int? {
        let row = ArrangedRow(
            value: value, kept: query.keeps(value), sortValues: query.sortValues(of: value),
            priority: random.next())
        content.insert(row, at: index)
        guard row.kept else { return nil }
        return arrange(row)
    }

    private func removeContent(at index: Int) {
        let row = content.remove(at: index)
        if row.kept && !query.order.isEmpty { _ = arranged.remove(at: ArrangedTree.index(of: row)) }
    }

    /// Puts a kept row (already in the content) into the view order; returns its index there.
    private func arrange(_ row: ArrangedRow) -> Int {
        if query.order.isEmpty { return ContentTree.position(of: row).keptBefore }
        return arranged.insert(row) { [query] other in
            if let before = query.compare(other.sortValues, row.sortValues) { return before }
            return ContentTree.position(of: other).index < ContentTree.position(of: row).index
        }
    }

    private func arrangedIndex(of row: ArrangedRow) -> Int {
        query.order.isEmpty ? ContentTree.position(of: row).keptBefore : ArrangedTree.index(of: row)
    }

    /// Takes a kept row out of the view order (it stays in the content).
    private func unarrange(_ row: ArrangedRow) -> Int {
        let index = arrangedIndex(of: row)
        if !query.order.isEmpty { _ = arranged.remove(at: index) }
        return index
    }

    private func setKept(_ row: ArrangedRow, _ kept: Bool) {
        row.kept = kept
        ContentTree.recount(from: row)
    }

    /// An element's new value (`inner`: the change inside it that made it, if any).
    private func update(_ row: ArrangedRow, to value: JSON, inner: Change?, _ out: inout Output) {
        let keeps = query.keeps(value)
        let sortValues = query.sortValues(of: value)
        let wasKept = row.kept, old = row.value
        switch (wasKept, keeps) {
        case (false, false):
            row.value = value
            row.sortValues = sortValues
        case (false, true):
            row.value = value
            row.sortValues = sortValues
            setKept(row, true)
            entered(arrange(row), &out)
        case (true, false):
            let index = unarrange(row)
            setKept(row, false)
            row.value = value
            row.sortValues = sortValues
            left(index, was: old, &out)
        case (true, true):
            row.value = value
            guard sortValues != row.sortValues else {
                changedInPlace(arrangedIndex(of: row), row: row, inner: inner, &out)
                return
            }
            reorder(row, was: old, changed: true, &out) { row.sortValues = sortValues }
        }
    }

    /// An element moved in the array from `from` to `to`: in a view in array order, a kept one may move.
    private func move(from: Int, to: Int, _ out: inout Output) {
        guard from != to else { return }
        let row = content.row(at: from)
        guard row.kept else {
            _ = content.remove(at: from)
            content.insert(row, at: to)
            return
        }
        reorder(row, was: row.value, changed: false, &out) {
            _ = content.remove(at: from)
            content.insert(row, at: to)
        }
    }

    /// Takes kept `row` out of the view, runs `change` (which moves it), and puts it back: a `move`
    /// (and a `replace` when `changed`, its value) when it was shown and still is, else what leaving and entering do to the
    /// shown rows. The shown range is the same before and after: the count does not change.
    private func reorder(_ row: ArrangedRow, was old: JSON, changed: Bool, _ out: inout Output, _ change: () -> Void) {
        let mark = out.changes.count
        let from = unarrange(row)
        setKept(row, false)
        left(from, was: old, &out)
        change()
        setKept(row, true)
        let to = arrange(row)
        entered(to, &out)
        let shown = window
        let before = shown.lowerBound, after = query.limit == nil ? Int.max : shown.upperBound
        if from == to && !shown.contains(from) || (from < before && to < before) || (from >= after && to >= after) {
            out.changes.removeSubrange(mark...)  // the shown rows are the same
        } else if shown.contains(from) && shown.contains(to) {
            out.changes.removeSubrange(mark...)
            if from != to {
                out.move(from - shown.lowerBound, to - shown.lowerBound, row.value, changed: changed)
            } else if changed {
                out.replace(to - shown.lowerBound, row.value)
            }
        }
    }

    // MARK: What the shown rows see

    /// A row entered the arranged order at `index` (the rows from there moved one down).
    private func entered(_ index: Int, _ out: inout Output) {
        let count = matchCount, offset = query.offset
        guard let limit = query.limit else {
            if index >= offset {
                out.insert(index - offset, element(at: index))
            } else if offset < count {
                out.insert(0, element(at: offset))
            }
            return
        }
        if index >= offset + limit { return }
        // Shown before: offset ..< min(count - 1, offset + limit); the last one is now one further.
        if count - 1 >= offset + limit { out.remove(limit - 1, key: element(at: offset + limit)) }
        if index >= offset { out.insert(index - offset, element(at: index)) } else if offset < count { out.insert(0, element(at: offset)) }
    }

    /// A row (`old`, as it was shown) left the arranged order from `index` (the rows after it moved one up).
    private func left(_ index: Int, was old: JSON, _ out: inout Output) {
        let count = matchCount, offset = query.offset  // count: without it
        if index >= offset + (query.limit ?? Int.max - offset) { return }
        if index >= offset {
            out.remove(index - offset, key: old)
        } else if offset < count + 1 {
            out.remove(0, key: element(at: offset - 1))  // the first row shown moved one up, out of the window
        } else {
            return
        }
        if let limit = query.limit, offset + limit - 1 < count { out.insert(limit - 1, element(at: offset + limit - 1)) }
    }

    private func changedInPlace(_ index: Int, row: ArrangedRow, inner: Change?, _ out: inout Output) {
        guard window.contains(index) else { return }
        let at = index - window.lowerBound
        if let inner, !inner.path.components.isEmpty {
            out.inside(at, inner)
        } else {
            out.replace(at, row.value)
        }
    }
}

/// The changes a view sends, at its path.
private struct Output {
    let path: Path
    var changes: [Change] = []

    mutating func insert(_ index: Int, _ value: JSON) {
        changes.append(Change(kind: .insert, path: path, value: value, index: index, key: Change.key(of: value)))
    }

    mutating func remove(_ index: Int, key row: JSON) {
        // An insert at the same place just before it (a row that entered the window's last place
        // and was pushed out again in one reorder) cancels out.
        if let last = changes.last, last.kind == .insert, last.index == index {
            changes.removeLast()
            return
        }
        changes.append(Change(kind: .remove, path: path, index: index, key: Change.key(of: row)))
    }

    mutating func replace(_ index: Int, _ value: JSON) {
        changes.append(Change(kind: .replace, path: path, value: value, index: index, key: Change.key(of: value)))
    }

    mutating func move(_ from: Int, _ to: Int, _ value: JSON, changed: Bool) {
        changes.append(Change(kind: .move, path: path, from: from, to: to, key: Change.key(of: value)))
        if changed { changes.append(Change(kind: .replace, path: path, value: value, index: to, key: Change.key(of: value))) }
    }

    mutating func inside(_ index: Int, _ change: Change) {
        var moved = change
        moved.path = Path(path.components + [String(index)] + change.path.components)
        changes.append(moved)
    }
}

/// SplitMix64: a small fast generator, for treap priorities (from a random seed) and for seeded tests
/// (a failing run is replayed from its seed).
struct SplitMix: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
