import Collections

/// Following a source array granularly: the array mirror (`each`, or no transform) and the aggregates.
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
        let taken = state.withLock { state -> Bool in
            guard !state.needsFullSync, state.shadow != nil else { return false }
            shadow = state.shadow.take()!
            aggregator = state.aggregator.take()
            return true
        }
        guard taken else { return false }
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
                    if aggregator != nil {
                        switch change.kind {
                        case .insert: aggregator!.insert(change.value!, elements: shadow)
                        case .remove: aggregator!.remove(old!, elements: shadow)
                        case .replace: aggregator!.replace(old!, with: change.value!, elements: shadow)
                        default: break
                        }
                    } else if let sequence = try mirror(change, into: endpoint, depth: depth) {
                        lastWrite = sequence
                    }
                } else {
                    // A change inside element k: edit the copy, then replace element k of the target.
                    guard let index = Int(components[base]), shadow.indices.contains(index) else { ok = false; break }
                    let old = shadow[index]
                    var element = old
                    guard JSONEdit.apply(change, to: &element, below: base + 1) else { ok = false; break }
                    shadow[index] = element
                    if aggregator != nil {
                        aggregator!.replace(old, with: element, elements: shadow)
                    } else {
                        let replace = Change(kind: .replace, path: source.path, value: element, index: index)
                        if let sequence = try mirror(replace, into: endpoint, depth: depth) { lastWrite = sequence }
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
                lastWrite = write(depth: depth, { (depth) throws(StoreError) in
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
                state.sourceSynced = max(state.sourceSynced, commit.sequence)
            } else {
                state.aggregator = aggregator
            }
            if let lastWrite { state.targetSynced = max(state.targetSynced, lastWrite) }
        }
        return ok
    }

    /// Applies one array operation of the source to the target array; `nil` when the write changed nothing.
    /// A target that no longer fits (not an array, wrong length) throws, and the caller resyncs it whole.
    private func mirror(_ change: Change, into endpoint: BindingEndpoint, depth: Int) throws(BindingError) -> UInt64? {
        let path = endpoint.path, model = endpoint.model, depth = depth + 1
        // The element sent forward, for the operations that carry one.
        let element: JSON? = change.kind == .insert || change.kind == .replace ? try forwardElement(change.value!) : nil
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
        return result.changed ? result.sequence : nil
    }
}
