import OrderedCollections
import DequeModule

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

extension UndoStep {
    /// How much the edit this step undoes changed its model's counted size (see `JSON.measure`), given
    /// `added`, the counted size of the value the edit wrote, and `modelSize`, the model's size before it.
    /// Measuring the values it replaced or removed adds their size to `measured`.
    func sizeChange(adding added: Int, modelSize: Int, measured: inout Int) -> Int {
        func size(of old: JSON) -> Int {
            let size = old.countedSize
            measured += size
            return size
        }
        switch self {
        case .root: return added - modelSize
        case .member(let path, nil): return JSON.stringSize(path.last!) + 2 + added
        case .member(_, let old?): return added - size(of: old)
        case .removedMember(let path, let old, _): return -(JSON.stringSize(path.last!) + 2 + size(of: old))
        case .inserted: return added + 1
        case .removed(_, _, let old): return -(size(of: old) + 1)
        case .replaced(_, _, let old): return added - size(of: old)
        case .moved: return 0
        }
    }
}

extension JSON {
    /// Reverses the edit `step` was made for; it must be the last edit made to this value.
    mutating func undo(_ step: UndoStep) {
        // Each step reverses an edit that succeeded on exactly this state, so it cannot fail.
        do {
            try reverse(step)
        } catch {
            preconditionFailure("rolling back a write failed: \(error)")
        }
    }

    private mutating func reverse(_ step: UndoStep) throws(StoreError) {
        switch step {
        case .root(let old):
            self = old
        case .member(let path, let old):
            let key = path.last!
            try withValue(at: path, depth: path.components.count - 1) { (parent) throws(StoreError) in
                var members = OrderedDictionary<String, JSON>()
                guard parent.takeObject(into: &members) else { return }
                if let old { members[key] = old } else { members.removeValue(forKey: key) }
                parent = .object(members)
            }
        case .removedMember(let path, let old, let position):
            let key = path.last!
            try withValue(at: path, depth: path.components.count - 1) { (parent) throws(StoreError) in
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
        try withValue(at: path, depth: path.components.count) { (value) throws(StoreError) in
            var elements = Deque<JSON>()
            guard value.takeArray(into: &elements) else { return }
            body(&elements)
            value = .array(elements)
        }
    }
}
