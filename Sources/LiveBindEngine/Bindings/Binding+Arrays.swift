import DequeModule

/// Following a source array granularly: the array mirror (`each`, or no transform), the aggregates,
/// and views (the shown rows' changes written into the target array).
///
/// The binding keeps a copy of the source array (`shadow`) updated from the granular changes, so it
/// knows removed values (for running sums and min/max) and can apply element changes in commit order
/// without reading the store. An insert at i becomes an insert at i in the target, and so on.
extension Binding {
    /// Follows `commit` granularly; `false` when it cannot (the caller then syncs the whole value).
    func forwardGranular(_ commit: Commit, depth: Int) -> Bool {
        guard followsArray, sink == nil, let endpoint = target.endpoint, case .changes(let changes) = commit.kind else { return false }
        // Take the shadow and aggregator out of the lock so they can be edited in place without copies;
        // only this thread runs the binding now.
        var shadow = Deque<JSON>()
        var aggregator: (any Aggregator)?
        var arranged: ArrangedArray?
        let taken = state.withLock { state -> Bool in
            guard !state.needsFullSync, state.shadow != nil else { return false }
            shadow = state.shadow.take()!
            aggregator = state.aggregator.take()
            arranged = state.arranged?.array
            return true
        }
        guard taken else { return false }
        guard transform?.view == nil || arranged != nil else {
            // A view not arranged yet (its source was no array): the caller syncs it whole.
            state.withLock { $0.shadow = shadow }
            return false
        }
        var lastWrite: UInt64?
        var ok = true
        let base = source.path.components.count
        for change in changes where source.isTouched(by: change.path) {
            let components = change.path.components
            guard components.count >= base, source.path.isPrefix(of: change.path) else { ok = false; break }
            do throws(BindingError) {
                if components.count == base {
                    guard change.kind != .set, !(change.kind == .remove && change.index == nil) else { ok = false; break }
                    let old = change.index.flatMap { shadow.indices.contains($0) ? shadow[$0] : nil }
                    guard JSONEdit.apply(change, to: &shadow) else { ok = false; break }
                    if let arranged {
                        for shown in arranged.apply(change, at: source.path) {
                            lastWrite = try mirrorShown(shown, of: arranged, into: endpoint, depth: depth) ?? lastWrite
                        }
                        guard arranged.contentCount == shadow.count else { ok = false; break }  // it did not fit
                    } else if aggregator != nil {
                        switch change.kind {
                        case .insert: aggregator!.insert(change.value!, elements: shadow)
                        case .remove: aggregator!.remove(old!, elements: shadow)
                        case .replace: aggregator!.replace(old!, with: change.value!, elements: shadow)
                        default: break
                        }
                    } else if let order = try mirror(change, element: try forwardElement(of: change), into: endpoint, depth: depth) {
                        lastWrite = order
                    }
                } else {
                    // A change inside element k: edit the copy, then replace element k of the target.
                    guard let index = Int(components[base]), shadow.indices.contains(index) else { ok = false; break }
                    let old = shadow[index]
                    var element = old
                    guard JSONEdit.apply(change, to: &element, below: base + 1) else { ok = false; break }
                    shadow[index] = element
                    if let arranged {
                        for shown in arranged.apply(change, at: source.path) {
                            lastWrite = try mirrorShown(shown, of: arranged, into: endpoint, depth: depth) ?? lastWrite
                        }
                    } else if aggregator != nil {
                        aggregator!.replace(old, with: element, elements: shadow)
                    } else {
                        let replace = Change(kind: .replace, path: source.path, value: element, index: index)
                        if let order = try mirror(replace, element: try forwardElement(element), into: endpoint, depth: depth) {
                            lastWrite = order
                        }
                    }
                }
            } catch {
                // The whole-value sync that follows reports transform and validation errors itself.
                ok = false
                break
            }
        }
        if ok, let aggregator {
            do throws(BindingError) {
                let output = try validated(aggregator.result)
                lastWrite =
                    write(
                        depth: depth,
                        { (depth) throws(StoreError) in
                            try store.set(output, at: endpoint.path, in: endpoint.model, ifRevision: nil, depth: depth)
                        }) ?? lastWrite
            } catch {
                fail(error)
            }
        }
        state.withLock { state in
            state.fireCount += 1
            if ok {
                state.shadow = shadow
                state.aggregator = aggregator
                state.sourceSynced = max(state.sourceSynced, commit.order)
            } else {
                state.aggregator = aggregator
            }
            if let lastWrite { state.targetSynced = max(state.targetSynced, lastWrite) }
        }
        return ok
    }

    /// The element an array operation sends forward (through `each`'s transform), for those that carry one.
    private func forwardElement(of change: Change) throws(BindingError) -> JSON? {
        change.kind == .insert || change.kind == .replace ? try forwardElement(change.value!) : nil
    }

    /// Writes one change of a view's shown rows into the target array: a change inside a shown row
    /// replaces that row, a `set` the whole array.
    private func mirrorShown(
        _ shown: Change, of arranged: ArrangedArray, into endpoint: BindingEndpoint,
        depth: Int
    ) throws(BindingError) -> UInt64? {
        let base = source.path.components.count
        if shown.path.components.count > base, let index = Int(shown.path.components[base]) {
            let row = arranged.element(at: arranged.query.offset + index)
            return try mirror(
                Change(kind: .replace, path: source.path, value: row, index: index), element: row, into: endpoint, depth: depth)
        }
        guard shown.kind == .set else { return try mirror(shown, element: shown.value, into: endpoint, depth: depth) }
        let rows = try validated(shown.value ?? .array([]))
        do throws(StoreError) {
            let result = try store.set(rows, at: endpoint.path, in: endpoint.model, ifRevision: nil, depth: depth + 1)
            return result.changed ? result.order : nil
        } catch {
            throw .store(error)
        }
    }

    /// Applies one array operation of the source to the target array, with `element` its value sent
    /// forward; `nil` when the write changed nothing. A target that no longer fits (not an array, wrong
    /// length) throws, and the caller resyncs it whole.
    private func mirror(_ change: Change, element: JSON?, into endpoint: BindingEndpoint, depth: Int) throws(BindingError) -> UInt64? {
        let path = endpoint.path, model = endpoint.model, depth = depth + 1
        let result: WriteResult
        do throws(StoreError) {
            switch change.kind {
            case .insert:
                result = try store.insert(element!, at: change.index!, in: path, of: model, ifRevision: nil, depth: depth)
            case .remove:
                result = try store.remove(at: path.appending(String(change.index!)), in: model, ifRevision: nil, depth: depth)
            case .replace:
                result = try store.replace(at: change.index!, in: path, of: model, with: element!, ifRevision: nil, depth: depth)
            case .move:
                result = try store.move(from: change.from!, to: change.to!, in: path, of: model, ifRevision: nil, depth: depth)
            case .set:
                return nil
            }
        } catch {
            throw .store(error)
        }
        return result.changed ? result.order : nil
    }
}
