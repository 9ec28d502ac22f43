/// Following the source by path: the fast path of one-way bindings between key paths through a
/// transform that does not follow arrays (`scale`, `format`, `threshold`, …).
///
/// Such a binding is not run from its registry's store-wide feed: it observes its source path in the
/// store, like any observer, and applies the transform to the value the change carries, so a hop is
/// two store writes with the binding in between and no `Commit` built for it. The changes arrive with
/// their commit's order and binding depth (`ChangeStamp`), which keep the loop guard and the
/// skipping of deliveries a whole read already reflects (`sourceSynced`) exactly as on the feed.
extension Binding {
    /// Whether this binding follows its source through a path observer instead of the registry's feed.
    var followsPath: Bool {
        mode == .oneWay && sink == nil && transform != nil && target.endpoint != nil && !followsArray
    }

    /// Starts observing the source path. Called once, by the registry, when the binding is made.
    func startFollowing() {
        // The observation holds the binding until `stopFollowing` cancels it: the registry stops it
        // when the binding is removed and when the registry itself goes away.
        let token = store.observeStamped(source.path, in: source.model) { change, stamp in
            self.received(change, stamp)
        }
        state.withLock { $0.following = token }
    }

    /// Stops observing the source path; safe to call more than once.
    func stopFollowing() {
        let token = state.withLock { $0.following.take() }
        token?.cancel()
    }

    /// Called by the source's path observer with each change at, above or below the source.
    ///
    /// Two critical sections in the common case: one to claim the binding (or queue the change for the
    /// thread running it), one to record the outcome and release it.
    private func received(_ change: Change, _ stamp: ChangeStamp) {
        // Replayed from a cluster's log: the node that made it ran this binding already.
        guard stamp.depth != Store.replayedDepth else { return }
        let runNow = state.withLock { state -> Bool in
            if state.busy {
                state.queue.append(.change(change, stamp))
                return false
            }
            guard state.enabled, stamp.order > state.sourceSynced else { return false }
            state.busy = true
            return true
        }
        guard runNow else { return }
        let outcome = follow(change, stamp, inDelivery: true)
        let next = state.withLock { state -> BindingWork? in
            outcome.record(in: &state)
            guard let next = state.queue.popFirst() else { state.busy = false; return nil }
            return next
        }
        if let next { drain(from: next) }
    }

    /// Sends one change of the source forward: a `set` of the source itself by applying the transform
    /// to its value, anything else (a change above or below it, a removal) by reading the source whole.
    /// `inDelivery`: called by the store's delivering thread, whose single call this may be (the
    /// target's one observer is then called at once; see `Store.claimNestedDelivery`).
    func follow(_ change: Change, _ stamp: ChangeStamp, inDelivery: Bool = false) -> FollowOutcome {
        // Only a loop through bindings of several registries gets this deep (see `BindingCensus`).
        guard stamp.depth <= census.loopLimit else {
            return FollowOutcome(fired: false, error: .propagationLimit(depth: stamp.depth, at: target.description))
        }
        guard change.kind == .set, change.path == source.path, case .some(let value) = change.value,
            case .endpoint(let endpoint) = target
        else {
            forwardWhole(depth: stamp.depth)
            return FollowOutcome(fired: false)
        }
        // The value is the one this commit set: a later commit is delivered after it and sent on in turn.
        // `transform` is used in place: binding it to a local would copy (and retain) the whole struct.
        let output: JSON
        do throws(BindingError) {
            output = try validated(try transform.unsafelyUnwrapped.applyForward(value))
        } catch {
            return FollowOutcome(fired: true, error: error)
        }
        do throws(StoreError) {
            let result = try store.set(
                output, at: endpoint.path, in: endpoint.model, ifRevision: nil,
                depth: stamp.depth + 1, inDelivery: inDelivery)
            return FollowOutcome(fired: true, written: result.changed ? result.order : nil)
        } catch {
            return FollowOutcome(fired: true, error: .store(error))
        }
    }
}

/// What sending one change forward did, recorded in the binding's state in the same critical section
/// that releases it.
struct FollowOutcome: Sendable {
    /// Whether it propagated a value (counted in `fireCount`, even when the value then failed).
    var fired: Bool
    /// The order of the target write, when it changed something.
    var written: UInt64?
    /// The failure to record as the last error.
    var error: BindingError?

    func record(in state: inout BindingState) {
        if fired { state.fireCount += 1 }
        if let written { state.targetSynced = max(state.targetSynced, written) }
        if let error { state.lastError = error }
    }
}
