import DequeModule
import LiveBindEngine

/// One change as a location's stream sends it: a change of the commit, or a `set` that says what the
/// location holds now (`exists` false: nothing).
struct LocationChange {
    var change: Change
    var exists = true
}

extension Subscription {
    /// Appends to `out` what `change`, just applied to `mirror`, means for this location: the change
    /// itself when it is at or below the location (in window coordinates for a window), a `set` of
    /// the location's new value when it replaced, removed or shifted something above it, and the rows
    /// entering and leaving a window. Nothing for a change elsewhere.
    mutating func changes(for change: Change, in mirror: ModelMirror, into out: inout [LocationChange]) {
        if path.isPrefix(of: change.path) {
            guard let window else { return out.append(LocationChange(change: change)) }
            let depth = path.components.count
            if change.path.components.count == depth {
                let isArrayChange = change.index != nil || change.from != nil
                if isArrayChange, case .array(let rows)? = mirror.value(at: path) {
                    windowChanges(for: change, rows: rows, window: window, into: &out)
                } else {
                    reset(in: mirror, into: &out)
                }
                return
            }
            // A change inside one row: sent only for a row in the window, with its index in the window.
            let rows = window.rows(length: current.length)
            guard let index = Path.arrayIndex(change.path.components[depth]), rows.contains(index) else { return }
            var inWindow = change
            inWindow.path.components[depth] = String(index - rows.lowerBound)
            out.append(LocationChange(change: inWindow))
        } else if change.path.isPrefix(of: path) && Self.reaches(change, below: path) {
            reset(in: mirror, into: &out)
        }
    }

    /// Whether `change`, made at a proper ancestor of `location`, changed what is at `location`: it set or
    /// removed the ancestor, or inserted, removed, replaced or moved an element at or before the
    /// location's element of an ancestor array.
    static func reaches(_ change: Change, below location: Path) -> Bool {
        guard change.index != nil || change.from != nil else { return true }
        guard let element = Path.arrayIndex(location.components[change.path.components.count]) else { return false }
        switch change.kind {
        case .insert, .remove: return (change.index ?? .max) <= element
        case .replace: return change.index == element
        case .move:
            guard let from = change.from, let to = change.to else { return true }
            return min(from, to) <= element && element <= max(from, to)
        case .set: return true
        }
    }

    /// Appends a `set` of everything at the location (a window's rows), and remembers where a window is.
    mutating func reset(in mirror: ModelMirror, into out: inout [LocationChange]) {
        let (value, exists) = currentValue(in: mirror)
        out.append(LocationChange(change: Change(kind: .set, path: path, value: value), exists: exists))
    }

    /// What the location holds in `mirror` (a window: its rows, and `current` is updated), and whether
    /// it exists; `null` when it does not.
    mutating func currentValue(in mirror: ModelMirror) -> (value: JSON, exists: Bool) {
        let value = mirror.value(at: path)
        if let view {
            guard let shared = mirror.views[SharedView.Key(path: path, query: view)] else { return (.array([]), false) }
            current = shared.position
            return (.array(Deque(shared.arranged.rows)), value != nil)
        }
        guard let window else { return (value ?? .null, value != nil) }
        guard case .array(let elements)? = value else {
            current = Window.Position(offset: window.rows(length: 0).lowerBound, length: 0)
            return (value == nil ? .null : .array([]), value != nil)
        }
        let rows = window.rows(length: elements.count)
        current = Window.Position(offset: rows.lowerBound, length: elements.count)
        // A window from past the end shows no rows (and is empty, not a slice out of bounds).
        return (.array(rows.isEmpty ? [] : Deque(elements[rows])), true)
    }

    /// The rows leaving and entering the window when an element of its array was inserted, removed,
    /// replaced or moved (`rows` is the array after it), as removes (from the last row up), at most one
    /// move, and inserts (from the first row down), with indexes in the window.
    private mutating func windowChanges(
        for change: Change, rows: Deque<JSON>, window: Window,
        into out: inout [LocationChange]
    ) {
        let before = window.rows(length: current.length)
        let after = window.rows(length: rows.count)
        current = Window.Position(offset: after.lowerBound, length: rows.count)
        switch change.kind {
        case .replace:
            guard let index = change.index, after.contains(index) else { return }
            out.append(
                LocationChange(
                    change: Change(
                        kind: .replace, path: path, value: rows[index],
                        index: index - after.lowerBound, key: Change.key(of: rows[index]))))
        case .insert, .remove:
            shiftChanges(for: change, rows: rows, before: before, after: after, into: &out)
        case .move:
            // A move keeps the array's length, so the window stays where it was.
            guard let from = change.from, let to = change.to, before == after else { return reset(rows: rows, into: &out) }
            moveChanges(from: from, to: to, rows: rows, window: after, into: &out)
        case .set:
            reset(rows: rows, into: &out)
        }
    }

    /// A `set` of the window's rows, for an array change this code does not take apart.
    private func reset(rows: Deque<JSON>, into out: inout [LocationChange]) {
        let range = window?.rows(length: rows.count) ?? 0..<0
        out.append(
            LocationChange(
                change: Change(
                    kind: .set, path: path,
                    value: .array(range.isEmpty ? [] : Deque(rows[range])))))
    }

    /// The window's removes and inserts for an element inserted or removed: the rows that leave are a
    /// run at each end of the old window plus the removed one, and the rows that enter a run at each end
    /// of the new window plus the inserted one (the other rows keep their order), so this costs what it
    /// sends, not the window's size.
    private func shiftChanges(
        for change: Change, rows: Deque<JSON>, before: Range<Int>, after: Range<Int>,
        into out: inout [LocationChange]
    ) {
        let changed = change.index ?? (change.kind == .insert ? rows.count - 1 : -1)
        /// Where the element at `index` before the change is after it; nil for the one removed.
        func landing(_ index: Int) -> Int? {
            if change.kind == .insert { return index < changed ? index : index + 1 }
            return index == changed ? nil : (index > changed ? index - 1 : index)
        }
        func leaves(_ index: Int) -> Bool { landing(index).map { !after.contains($0) } ?? true }
        /// Where the element at `index` after the change was before it; nil for the one inserted.
        func origin(_ index: Int) -> Int? {
            if change.kind == .insert { return index < changed ? index : (index == changed ? nil : index - 1) }
            return index < changed ? index : index + 1
        }
        func enters(_ index: Int) -> Bool { origin(index).map { !before.contains($0) } ?? true }
        var leaving = Set<Int>()
        var low = before.lowerBound
        while low < before.upperBound && leaves(low) { leaving.insert(low); low += 1 }
        var high = before.upperBound - 1
        while high >= low && leaves(high) { leaving.insert(high); high -= 1 }
        if change.kind == .remove && before.contains(changed) { leaving.insert(changed) }
        for index in leaving.sorted(by: >) {
            let key = landing(index).map { Change.key(of: rows[$0]) } ?? change.key
            out.append(
                LocationChange(
                    change: Change(
                        kind: .remove, path: path, index: index - before.lowerBound,
                        key: key ?? nil)))
        }
        var entering = Set<Int>()
        low = after.lowerBound
        while low < after.upperBound && enters(low) { entering.insert(low); low += 1 }
        high = after.upperBound - 1
        while high >= low && enters(high) { entering.insert(high); high -= 1 }
        if change.kind == .insert && after.contains(changed) { entering.insert(changed) }
        for index in entering.sorted() {
            out.append(
                LocationChange(
                    change: Change(
                        kind: .insert, path: path, value: rows[index],
                        index: index - after.lowerBound, key: Change.key(of: rows[index]))))
        }
    }

    /// The window's events for an element moved inside its array (the length, so the window, is the
    /// same): a `move` when both ends are in the window; else the moved row leaving or entering and the
    /// row shifted across the window's edge entering or leaving. A few events, whatever the window's size.
    private func moveChanges(
        from: Int, to: Int, rows: Deque<JSON>, window: Range<Int>,
        into out: inout [LocationChange]
    ) {
        guard from != to, !window.isEmpty else { return }
        let first = window.lowerBound, last = window.upperBound - 1
        func remove(_ index: Int, keyAt landed: Int) {
            out.append(
                LocationChange(
                    change: Change(
                        kind: .remove, path: path, index: index - first,
                        key: Change.key(of: rows[landed]))))
        }
        func insert(_ index: Int) {
            out.append(
                LocationChange(
                    change: Change(
                        kind: .insert, path: path, value: rows[index], index: index - first,
                        key: Change.key(of: rows[index]))))
        }
        switch (window.contains(from), window.contains(to)) {
        case (true, true):
            out.append(
                LocationChange(
                    change: Change(
                        kind: .move, path: path, from: from - first, to: to - first,
                        key: Change.key(of: rows[to]))))
        case (true, false):
            remove(from, keyAt: to)
            insert(to > last ? last : first)
        case (false, true):
            if from < first { remove(first, keyAt: first - 1) } else { remove(last, keyAt: last + 1) }
            insert(to)
        case (false, false):
            if from < first && to > last {
                remove(first, keyAt: first - 1)
                insert(last)
            } else if from > last && to < first {
                remove(last, keyAt: last + 1)
                insert(first)
            }
        }
    }
}
