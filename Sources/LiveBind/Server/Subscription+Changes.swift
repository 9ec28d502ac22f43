import DequeModule

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
    private mutating func windowChanges(for change: Change, rows: Deque<JSON>, window: Window,
                                        into out: inout [LocationChange]) {
        let before = window.rows(length: current.length)
        let after = window.rows(length: rows.count)
        current = Window.Position(offset: after.lowerBound, length: rows.count)
        if change.kind == .replace, let index = change.index {
            guard after.contains(index) else { return }
            out.append(LocationChange(change: Change(kind: .replace, path: path, value: rows[index],
                                                     index: index - after.lowerBound, key: Change.key(of: rows[index]))))
            return
        }
        /// Where the element at `index` before the change is after it; nil for the one removed.
        func landing(_ index: Int) -> Int? {
            switch change.kind {
            case .insert:
                let inserted = change.index ?? (rows.count - 1)
                return index < inserted ? index : index + 1
            case .remove:
                guard let removed = change.index else { return index }
                return index == removed ? nil : (index > removed ? index - 1 : index)
            case .move:
                guard let from = change.from, let to = change.to else { return index }
                if index == from { return to }
                let shifted = index > from ? index - 1 : index
                return shifted >= to ? shifted + 1 : shifted
            case .set, .replace:
                return index
            }
        }
        if change.kind == .insert || change.kind == .remove {
            return shiftChanges(for: change, rows: rows, before: before, after: after, landing: landing, into: &out)
        }
        var kept: [Int] = []
        kept.reserveCapacity(before.count)
        for index in before.reversed() {
            if let landed = landing(index), after.contains(landed) {
                kept.append(landed)
                continue
            }
            let key = landing(index).map { Change.key(of: rows[$0]) } ?? change.key
            out.append(LocationChange(change: Change(kind: .remove, path: path, index: index - before.lowerBound,
                                                     key: key ?? nil)))
        }
        kept.reverse()
        if change.kind == .move, let to = change.to, let position = kept.firstIndex(of: to) {
            let target = kept.reduce(0) { $0 + ($1 < to ? 1 : 0) }
            if position != target {
                out.append(LocationChange(change: Change(kind: .move, path: path, from: position, to: target,
                                                         key: Change.key(of: rows[to]))))
            }
        }
        let staying = Set(kept)
        for index in after where !staying.contains(index) {
            out.append(LocationChange(change: Change(kind: .insert, path: path, value: rows[index],
                                                     index: index - after.lowerBound, key: Change.key(of: rows[index]))))
        }
    }

    /// The window's removes and inserts for an element inserted or removed: the rows that leave are a
    /// run at each end of the old window plus the removed one, and the rows that enter a run at each end
    /// of the new window plus the inserted one (the other rows keep their order), so this costs what it
    /// sends, not the window's size.
    private func shiftChanges(for change: Change, rows: Deque<JSON>, before: Range<Int>, after: Range<Int>,
                              landing: (Int) -> Int?, into out: inout [LocationChange]) {
        let changed = change.index ?? (change.kind == .insert ? rows.count - 1 : -1)
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
            out.append(LocationChange(change: Change(kind: .remove, path: path, index: index - before.lowerBound,
                                                     key: key ?? nil)))
        }
        var entering = Set<Int>()
        low = after.lowerBound
        while low < after.upperBound && enters(low) { entering.insert(low); low += 1 }
        high = after.upperBound - 1
        while high >= low && enters(high) { entering.insert(high); high -= 1 }
        if change.kind == .insert && after.contains(changed) { entering.insert(changed) }
        for index in entering.sorted() {
            out.append(LocationChange(change: Change(kind: .insert, path: path, value: rows[index],
                                                     index: index - after.lowerBound, key: Change.key(of: rows[index]))))
        }
    }
}
