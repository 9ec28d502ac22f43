extension JSON {
    /// Applies `change`, as a store's write recorded it, to a document in the state that write found:
    /// how a commit log's changes are replayed onto an older copy of a model.
    package mutating func replay(_ change: Change) throws(StoreError) {
        switch change.kind {
        case .set:
            guard let value = change.value else { throw .typeMismatch(path: change.path, expected: "a value", found: "none") }
            _ = try applySet(value, at: change.path)
        case .insert:
            guard let value = change.value else { throw .typeMismatch(path: change.path, expected: "a value", found: "none") }
            _ = try applyInsert(value, at: change.index, in: change.path)
        case .remove:
            _ = try applyRemove(at: change.index.map { change.path.appending(String($0)) } ?? change.path)
        case .replace:
            guard let value = change.value, let index = change.index else {
                throw .typeMismatch(path: change.path, expected: "a value and an index", found: "none")
            }
            _ = try applyReplace(at: index, in: change.path, with: value)
        case .move:
            guard let from = change.from, let to = change.to else {
                throw .typeMismatch(path: change.path, expected: "from and to", found: "none")
            }
            _ = try applyMove(from: from, to: to, in: change.path)
        }
    }
}
