import DequeModule

/// Running a binding: the serial work queue and the two directions of propagation.
///
/// Echoes and stale deliveries are recognised by commit order, not by comparing values: after the
/// binding reads or writes one side, every commit up to that order is already reflected there
/// (`sourceSynced`/`targetSynced`) and is skipped. So a two-way binding never sends its own write back,
/// even when the transform is lossy (floating point), and a delivery can never be applied twice.
extension Binding {
    /// Runs `work` now or, if this binding is running on some thread (maybe this one, re-entered through
    /// a store write), queues it for that thread to run next. Never blocks.
    func perform(_ work: BindingWork) {
        // The queue is empty whenever the binding is not busy, so idle work runs without queuing.
        let runNow = state.withLock { state in
            if state.busy {
                state.queue.append(work)
                return false
            }
            state.busy = true
            return true
        }
        guard runNow else { return }
        drain(from: work)
    }

    /// Runs `work` and then the queued work until the queue is empty; the caller made the binding busy.
    func drain(from work: BindingWork) {
        var next: BindingWork? = work
        while let current = next {
            run(current)
            next = state.withLock { state -> BindingWork? in
                guard let next = state.queue.popFirst() else { state.busy = false; return nil }
                return next
            }
        }
    }

    private func run(_ work: BindingWork) {
        switch work {
        case .resync:
            guard isEnabled else { return }
            forwardWhole(depth: 0)
        case .objectValue(let value):
            guard isEnabled else { return }
            sendBack(value, depth: 0)
        case .change(let change, let stamp):
            let current = state.withLock { $0.enabled && stamp.order > $0.sourceSynced }
            guard current else { return }
            let outcome = follow(change, stamp)
            state.withLock { outcome.record(in: &$0) }
        case .commit(let commit, let depth):
            let (forward, backward) = state.withLock { state -> (Bool, Bool) in
                guard state.enabled else { return (false, false) }
                let forward = commit.order > state.sourceSynced && Self.touches(commit, source)
                let backward =
                    !forward && mode == .twoWay && commit.order > state.targetSynced
                    && target.endpoint.map { Self.touches(commit, $0) } == true
                return (forward, backward)
            }
            guard forward || backward else { return }
            // Only a loop through bindings of several registries gets this deep (see `BindingCensus`).
            guard depth <= census.loopLimit else {
                let at = forward ? target.description : source.description
                fail(.propagationLimit(depth: depth, at: at))
                return
            }
            if forward {
                if !forwardGranular(commit, depth: depth) { forwardWhole(depth: depth) }
            } else {
                backwardWhole(depth: depth)
            }
        }
    }

    static func touches(_ commit: Commit, _ endpoint: BindingEndpoint) -> Bool {
        guard commit.model == endpoint.model else { return false }
        switch commit.kind {
        case .snapshot, .drop: return true
        case .changes(let changes): return changes.contains { endpoint.isTouched(by: $0.path) }
        }
    }

    // MARK: Forward, whole value

    /// Reads the source now and sends all of it forward (creation, re-enable, and any change that cannot
    /// be followed granularly).
    func forwardWhole(depth: Int) {
        guard let (order, value) = read(source) else { return }
        // A plain transform (no array following) needs no second critical section for a shadow copy.
        let plain = sink == nil && transform != nil && !followsArray
        let aggregator = state.withLock { state in
            state.sourceSynced = max(state.sourceSynced, order)
            state.needsFullSync = false
            state.fireCount += 1
            return state.aggregator
        }
        guard let value else { return }
        do throws(BindingError) {
            var output: JSON
            var shadow: Deque<JSON>?
            if let sink {
                if let error = sink.deliver(try transform?.applyForward(value) ?? value) { throw error }
                return
            } else if plain {
                output = try validated(try transform?.applyForward(value) ?? value)
                writeForward(output, depth: depth)
                return
            } else if var aggregator {
                guard case .array(let elements) = value else {
                    throw .transformFailed(
                        transform: transform?.name ?? "", reason: "expected an array at \(source), found \(value.typeName)")
                }
                aggregator.reset(elements)
                output = try validated(aggregator.result)
                shadow = elements
                state.withLock { $0.aggregator = aggregator }
            } else if let query = transform?.view {
                guard case .array(let elements) = value else {
                    throw .transformFailed(transform: "view", reason: "expected an array at \(source), found \(value.typeName)")
                }
                let arranged = ArrangedArray(elements, query: query)
                output = try validated(.array(Deque(arranged.rows)))
                shadow = elements
                state.withLock { $0.arranged = ArrangedBox(arranged) }
            } else if each {
                guard case .array(let elements) = value else {
                    throw .transformFailed(
                        transform: transform?.name ?? "each", reason: "each needs an array at \(source), found \(value.typeName)")
                }
                output = .array(Deque(try elements.map { element throws(BindingError) in try forwardElement(element) }))
                shadow = elements
            } else {
                output = try validated(try transform?.applyForward(value) ?? value)
                shadow = transform == nil ? value.arrayValue : nil
            }
            state.withLock { $0.shadow = shadow }
            writeForward(output, depth: depth)
        } catch {
            fail(error)
        }
    }

    /// Sets `output` at the target and records that the target reflects it.
    private func writeForward(_ output: JSON, depth: Int) {
        guard let endpoint = target.endpoint else { return }
        if let written = write(
            depth: depth,
            { (depth) throws(StoreError) in
                try store.set(output, at: endpoint.path, in: endpoint.model, ifRevision: nil, depth: depth)
            })
        {
            state.withLock { $0.targetSynced = max($0.targetSynced, written) }
        }
    }

    /// The transform (per element) and the validation of one element sent forward.
    func forwardElement(_ element: JSON) throws(BindingError) -> JSON {
        try validated(try transform?.applyForward(element) ?? element)
    }

    /// `value` after the validation rule: itself, its coerced form, or a `validationFailed` error.
    func validated(_ value: JSON) throws(BindingError) -> JSON {
        guard let validation, let path = target.endpoint?.path else { return value }
        switch validation.check(value) {
        case .accept: return value
        case .coerce(let coerced): return coerced
        case .reject(let reason): throw .store(.validationFailed(path: path, reason: reason))
        }
    }

    // MARK: Backward (two-way)

    /// The target changed from outside: validate it, then send it back through the reverse transform.
    private func backwardWhole(depth: Int) {
        guard let endpoint = target.endpoint, let (order, value) = read(endpoint) else { return }
        state.withLock { state in
            state.targetSynced = max(state.targetSynced, order)
            state.fireCount += 1
        }
        guard let value else { return }
        if let validation {
            switch validation.check(value) {
            case .accept: break
            case .reject(let reason):
                fail(.store(.validationFailed(path: endpoint.path, reason: reason)))
                return
            case .coerce(let coerced):
                // Correct the target; its own commit then comes back here as a valid value.
                _ = write(
                    depth: depth,
                    { (depth) throws(StoreError) in
                        try store.set(coerced, at: endpoint.path, in: endpoint.model, ifRevision: nil, depth: depth)
                    })
                return
            }
        }
        sendBack(value, depth: depth)
    }

    /// Writes a target-side value (from the target path or a Swift object) back to the source.
    private func sendBack(_ value: JSON, depth: Int) {
        do throws(BindingError) {
            let back: JSON
            if each {
                guard case .array(let elements) = value else {
                    throw .transformFailed(transform: transform?.name ?? "each", reason: "each needs an array, found \(value.typeName)")
                }
                back = .array(Deque(try elements.map { element throws(BindingError) in try transform?.applyReverse(element) ?? element }))
            } else {
                back = try transform?.applyReverse(value) ?? value
            }
            if sink != nil { state.withLock { $0.fireCount += 1 } }
            if let written = write(
                depth: depth,
                { (depth) throws(StoreError) in
                    try store.set(back, at: source.path, in: source.model, ifRevision: nil, depth: depth)
                })
            {
                state.withLock { state in
                    state.sourceSynced = max(state.sourceSynced, written)
                    if followsArray { state.shadow = back.arrayValue }
                }
            }
        } catch {
            fail(error)
        }
    }

    // MARK: Helpers

    /// The value at `endpoint` (`nil` when missing, recorded as the last error) and the order it is from.
    func read(_ endpoint: BindingEndpoint) -> (UInt64, JSON?)? {
        // One critical section for the value and its order; `nil` inside: the model does not exist.
        let (order, found) = store.withState { state -> (UInt64, JSON??) in
            let order = state.order(of: state.lastSequence)
            guard let entry = state.lookUp(endpoint.model), entry.exists else { return (order, nil) }
            return (order, .some(JSONEdit.value(in: entry.document, at: endpoint.path.components)))
        }
        guard let found else {
            fail(.store(.modelNotFound(endpoint.model)))
            return (order, nil)
        }
        guard let value = found else {
            fail(.store(.pathNotFound(endpoint.path)))
            return (order, nil)
        }
        return (order, value)
    }

    /// Runs a store write made by this binding, propagating a change `depth` binding writes deep, at
    /// `depth + 1`; returns the commit's order when it changed something.
    func write(depth: Int, _ operation: (Int) throws(StoreError) -> WriteResult) -> UInt64? {
        do {
            let result = try operation(depth + 1)
            return result.changed ? result.order : nil
        } catch {
            fail(.store(error))
            return nil
        }
    }

    /// Records `error` as the last error.
    func fail(_ error: BindingError) {
        state.withLock { $0.lastError = error }
    }
}
