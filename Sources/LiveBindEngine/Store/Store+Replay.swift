// A store fed by a shared log (cluster mode): commits other writers made are replayed into it, and
// its own commits that lost the race for the log's next sequence are rolled back.
extension Store {
    /// The depth (see `ChangeStamp.depth`) of changes and commits replayed from a shared log: bindings
    /// skip them, because the writer that made the commit already logged what its bindings derived.
    static let replayedDepth = -1

    /// Applies `commits`, made by other writers and already durable in a shared log, in order: each
    /// gets the sequence it has there (a gap in sequences is allowed). No limit is checked and no
    /// binding runs again; observers hear the changes (stamped `replayedDepth`), and the durable feed
    /// gets the batch.
    ///
    /// Commits of this store that are not durable yet are rolled back first (see ``rollBackToDurable``):
    /// the shared log ordered someone else's commit before them. `whileLocked` runs under the store's
    /// lock after that, so that the log can forget them atomically.
    ///
    /// Returns the commits applied and the calls to run (with them) once no store lock is held, and the
    /// reason a commit did not apply (the store then holds every commit before it).
    package func replay(_ commits: [Commit], whileLocked: () -> Void) -> (applied: [Commit], calls: DurableCalls, failure: String?) {
        var failure: String?
        var applied: [Commit] = []
        applied.reserveCapacity(commits.count)
        var feed: [@Sendable ([Commit]) -> Void] = []
        let pending = withState { state -> DeliveryBatch? in
            if log == nil { feed = state.durable.observers.map(\.call) }
            if state.lastSequence != state.durable.sequence { state.rollBack(log: log != nil) }
            whileLocked()
            for commit in commits where commit.sequence > state.lastSequence {
                if let reason = state.replay(commit) {
                    failure = reason
                    break
                }
                applied.append(commit)
            }
            return claimDelivery(&state)
        }
        if let pending { deliver(pending) }
        return (applied, log == nil ? DurableCalls(observers: feed) : logDidPersist(applied), failure)
    }

    /// Undoes every commit not durable yet, back to what clients see; `whileLocked` runs under the
    /// store's lock after that. Observers are not told: they heard the commits, and hear the next ones.
    /// Returns how many commits were undone.
    @discardableResult
    package func rollBackToDurable(whileLocked: () -> Void) -> UInt64 {
        withState { state in
            let undone = state.lastSequence - state.durable.sequence
            state.rollBack(log: log != nil)
            whileLocked()
            return undone
        }
    }
}

extension StoreState {
    /// Puts every entry holding a durable view back to it.
    mutating func rollBack(log: Bool) {
        guard log else { return }
        for entry in durable.pendingEntries {
            guard let view = entry.durable else { continue }
            if entry.exists { totalSize -= entry.size + StoreLimits.modelOverhead }
            entry.exists = view.exists
            entry.document = view.document
            entry.revision = view.revision
            entry.size = view.exists ? view.document.countedSize : 0
            if entry.exists { totalSize += entry.size + StoreLimits.modelOverhead }
            entry.durable = nil
            entry.lastCommit = 0
            if !entry.exists && entry.observers.isEmpty && lookUp(entry.name) === entry { removeEntry(entry.name) }
        }
        durable.pendingEntries.removeAll()
        sequencesUndone += lastSequence - durable.sequence
        lastSequence = durable.sequence
    }

    /// Applies one replayed commit; returns why it could not be, or nil.
    mutating func replay(_ commit: Commit) -> String? {
        let entry = makeEntry(for: commit.model)
        let depth = Store.replayedDepth
        switch commit.kind {
        case .snapshot(let value):
            if entry.exists { totalSize -= entry.size + StoreLimits.modelOverhead }
            entry.exists = true
            entry.document = value
            entry.size = value.countedSize
            totalSize += entry.size + StoreLimits.modelOverhead
            lastSequence = commit.sequence
            enqueue(Change(kind: .set, path: .root, value: value), for: entry, depth: depth)
        case .drop:
            if entry.exists { totalSize -= entry.size + StoreLimits.modelOverhead }
            entry.exists = false
            entry.document = .null
            entry.size = 0
            lastSequence = commit.sequence
            enqueue(Change(kind: .remove, path: .root), for: entry, depth: depth)
        case .changes(let changes):
            guard entry.exists else { return "commit \(commit.sequence) changes \(commit.model), which does not exist" }
            var document = entry.document
            for change in changes {
                do throws(StoreError) {
                    try document.replay(change)
                } catch {
                    return "commit \(commit.sequence) does not apply to \(commit.model): \(error)"
                }
            }
            totalSize -= entry.size
            entry.document = document
            entry.size = document.countedSize
            totalSize += entry.size
            lastSequence = commit.sequence
            if !entry.observers.isEmpty { for change in changes { enqueue(change, for: entry, depth: depth) } }
        }
        entry.revision = commit.kind.isDrop ? 0 : commit.revision
        durable.sequence = commit.sequence
        enqueue(commit, depth: depth)
        if !entry.exists && entry.observers.isEmpty { removeEntry(commit.model) }
        return nil
    }
}

extension Commit.Kind {
    /// Whether this is a drop.
    var isDrop: Bool {
        if case .drop = self { return true }
        return false
    }
}

extension Store {
    /// Makes `commit`'s edits again as a new write on the current state (a commit of this store that a
    /// shared log refused, rebased on what the log holds): a set or a replace is last-writer-wins, a
    /// `put` puts the value again, a drop drops the model. Bindings run as for any write. Throws, having
    /// changed nothing, when an edit no longer applies (a missing model, an index out of range, a limit).
    package func reapply(_ commit: Commit) throws(StoreError) {
        switch commit.kind {
        case .snapshot(let value):
            _ = try put(commit.model, value)
        case .drop:
            _ = try drop(commit.model)
        case .changes(let changes):
            try write(commit.model) { (editor: inout ModelEditor) throws(StoreError) in
                for change in changes { try editor.redo(change) }
            }
        }
    }
}

extension ModelEditor {
    /// Makes the edit `change` records again (see ``Store/reapply(_:)``).
    mutating func redo(_ change: Change) throws(StoreError) {
        switch change.kind {
        case .set:
            guard let value = change.value else { throw .typeMismatch(path: change.path, expected: "a value", found: "none") }
            try set(value, at: change.path)
        case .insert:
            guard let value = change.value, let index = change.index else {
                throw .typeMismatch(path: change.path, expected: "a value and an index", found: "none")
            }
            try insert(value, at: index, in: change.path)
        case .remove:
            try remove(at: change.index.map { change.path.appending(String($0)) } ?? change.path)
        case .replace:
            guard let value = change.value, let index = change.index else {
                throw .typeMismatch(path: change.path, expected: "a value and an index", found: "none")
            }
            try replace(at: index, in: change.path, with: value)
        case .move:
            guard let from = change.from, let to = change.to else {
                throw .typeMismatch(path: change.path, expected: "from and to", found: "none")
            }
            try move(from: from, to: to, in: change.path)
        }
    }
}
