import Collections

/// One step that reverses one applied edit; a failed write replays them backwards.
enum UndoStep {
    /// The whole document was replaced; this was the old one.
    case root(JSON)
    /// The member at the path was set; `old` is `nil` when it was created (and so is the last member).
    case member(Path, old: JSON?)
    /// The member at the path was removed from `position`.
    case removedMember(Path, old: JSON, position: Int)
    /// An element was inserted at `index` of the array at the path.
    case inserted(Path, index: Int)
    /// An element was removed from `index` of the array at the path.
    case removed(Path, index: Int, old: JSON)
    /// The element at `index` of the array at the path was replaced.
    case replaced(Path, index: Int, old: JSON)
    /// The element at `from` of the array at the path moved to `to`.
    case moved(Path, from: Int, to: Int)
}

extension ModelEditor {
    /// Reverses every edit made so far, newest first, and forgets the changes.
    mutating func rollback() {
        while let step = undoLog.popLast() {
            // Each step reverses an edit that succeeded on exactly this state, so it cannot fail.
            do {
                try undo(step)
            } catch {
                preconditionFailure("rolling back a write failed: \(error)")
            }
        }
        changes.removeAll(keepingCapacity: true)
        appendedIndex = nil
    }

    private mutating func undo(_ step: UndoStep) throws(StoreError) {
        switch step {
        case .root(let old):
            document = old
        case .member(let path, let old):
            let key = path.last!
            try document.withValue(at: path, depth: path.components.count - 1) { (parent) throws(StoreError) in
                var members = OrderedDictionary<String, JSON>()
                guard parent.takeObject(into: &members) else { return }
                if let old { members[key] = old } else { members.removeValue(forKey: key) }
                parent = .object(members)
            }
        case .removedMember(let path, let old, let position):
            let key = path.last!
            try document.withValue(at: path, depth: path.components.count - 1) { (parent) throws(StoreError) in
                var members = OrderedDictionary<String, JSON>()
                guard parent.takeObject(into: &members) else { return }
                members.updateValue(old, forKey: key, insertingAt: position)
                parent = .object(members)
            }
        case .inserted(let path, let index):
            try editArray(path) { $0.remove(at: index) }
        case .removed(let path, let index, let old):
            try editArray(path) { $0.insert(old, at: index) }
        case .replaced(let path, let index, let old):
            try editArray(path) { $0[index] = old }
        case .moved(let path, let from, let to):
            try editArray(path) { $0.insert($0.remove(at: to), at: from) }
        }
    }

    private mutating func editArray(_ path: Path, _ body: (inout Deque<JSON>) -> Void) throws(StoreError) {
        try document.withValue(at: path, depth: path.components.count) { (value) throws(StoreError) in
            var elements = Deque<JSON>()
            guard value.takeArray(into: &elements) else { return }
            body(&elements)
            value = .array(elements)
        }
    }
}
