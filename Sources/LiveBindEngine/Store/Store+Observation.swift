extension Store {
    /// Calls `handler` with every change at, above or below `path` in `model` (a change of `sensor`
    /// reaches an observer of `sensor.temperature`; an insert into `sensor.readings` reaches an observer of
    /// `sensor.readings` with its index). The model need not exist yet.
    ///
    /// Called after the store's lock is released, in commit order, never concurrently with another
    /// observer of this store. Keep the returned token: the observer stops when it is cancelled or released.
    public func observe(_ path: Path, in model: String, _ handler: @escaping @Sendable (Change) -> Void) -> ObservationToken {
        observe(path, in: model) { id in ObserverBox(id: id, onChange: handler) }
    }

    /// `observe`, for the bindings that follow a path: `handler` also gets each change's stamp (its
    /// commit's sequence and binding depth), which a plain observer does not need.
    func observeStamped(_ path: Path, in model: String, _ handler: @escaping @Sendable (Change, ChangeStamp) -> Void)
        -> ObservationToken
    {
        observe(path, in: model) { id in ObserverBox(id: id, onStampedChange: handler) }
    }

    /// Registers the observer `makeBox` makes with its id at `path` in `model`.
    private func observe(_ path: Path, in model: String, _ makeBox: (UInt64) -> ObserverBox) -> ObservationToken {
        let box = withState { state in
            state.nextObserverID += 1
            let box = makeBox(state.nextObserverID)
            state.makeEntry(for: model).observers.add(box, at: path)
            return box
        }
        return ObservationToken { [weak self] in
            box.isActive.store(false, ordering: .releasing)
            self?.withState { state in
                guard let entry = state.lookUp(model) else { return }
                entry.observers.remove(id: box.id, at: path)
                if !entry.exists, entry.observers.isEmpty { state.removeEntry(model) }
            }
        }
    }

    /// Calls `handler` with every commit of every model, in sequence order (the server's SSE feed).
    ///
    /// Called after the store's lock is released, never concurrently with another observer of this store.
    public func observeAll(_ handler: @escaping @Sendable (Commit) -> Void) -> ObservationToken {
        let box = withState { state in
            state.nextObserverID += 1
            let box = ObserverBox(id: state.nextObserverID, onCommit: handler)
            state.commitObservers.append(box)
            return box
        }
        return ObservationToken { [weak self] in
            box.isActive.store(false, ordering: .releasing)
            self?.withState { $0.commitObservers.removeAll { $0 === box } }
        }
    }
}
