import DequeModule
import LiveBindEngine
internal import LiveBindHTTP

/// Streams that subscribe to locations (`?sub=model/pointer`, windows of arrays).
///
/// Their events cannot be the shared frames: each location gets only what touches it, and a window's
/// indexes are its own. So the hub keeps a mirror of every model such streams name (`ModelMirror`),
/// replays each published commit onto it, and makes those streams' events from the commit and the
/// mirror, under the lock, into each stream's own queue (`Subscriber.derived`). Whole-model streams
/// never reach this code: a commit costs them one check that no mirror exists for its model.
extension EventHub {
    /// Makes `commit`'s events for the streams with locations in its model, after replaying it onto
    /// the model's mirror; wakes the suspended ones that got any. Called by `publish` with the lock held.
    ///
    /// The values the commit replaced in the mirror go to `released`, for `publish` to free once the
    /// lock is released.
    func deliver(
        _ commit: Commit, logFrame: EventFrame, in state: inout State,
        waking wake: inout [any HTTPStreamConnection], releasing released: inout [JSON]
    ) {
        guard var mirror = state.mirrors.removeValue(forKey: commit.model) else { return }
        defer { state.mirrors[commit.model] = mirror }
        guard commit.sequence > mirror.sequence else { return }
        mirror.journal.record(commit, bytes: logFrame.bytes.count)
        let subscribers = mirror.subscribers.compactMap { id in state.subscribers[id].map { (id: id, stream: $0) } }
        var outputs = subscribers.map { [[LocationChange]](repeating: [], count: $0.stream.subscriptions.count) }
        func forEachLocation(_ body: (inout Subscription, inout [LocationChange]) -> Void) {
            for (position, subscriber) in subscribers.enumerated() {
                for index in subscriber.stream.subscriptions.indices
                where subscriber.stream.subscriptions[index].model == commit.model {
                    body(&subscriber.stream.subscriptions[index], &outputs[position][index])
                }
            }
        }
        // Elements views arranged anew under the lock (arrays up to `SharedView.arrangedUnderLock` long).
        var arrangedRows = 0
        switch commit.kind {
        case .changes(let changes):
            for change in changes {
                if let replaced = mirror.value(replacedBy: change) { released.append(replaced) }
                do {
                    try mirror.apply(change)
                } catch {
                    // The mirror and the commits disagree: start it again from the store and give
                    // its streams fresh snapshots rather than events made from a wrong state.
                    let (views, journal) = (mirror.views, mirror.journal)
                    if let document = mirror.document { released.append(document) }
                    mirror = makeMirror(commit.model, subscribers: mirror.subscribers)
                    (mirror.views, mirror.journal) = (views, journal)
                    mirror.journal.restart(at: mirror.sequence)
                    for view in views.values {
                        arrangedRows += view.reset(in: mirror)
                        view.pending = []
                    }
                    for subscriber in subscribers { subscriber.stream.dropDerived(resync: .lagging) }
                    wakeAll(subscribers.map(\.id), in: &state, into: &wake)
                    startRearranging(&mirror, of: commit.model, in: &state)
                    state.metrics.countArranged(underLock: arrangedRows)
                    return
                }
                for view in mirror.views.values { arrangedRows += view.take(change, in: mirror) }
                forEachLocation { location, out in
                    if location.view == nil { location.changes(for: change, in: mirror, into: &out) }
                }
            }
        case .snapshot(let value):
            if let document = mirror.document { released.append(document) }
            mirror.document = value
            for view in mirror.views.values { arrangedRows += view.reset(in: mirror) }
            forEachLocation { location, out in if location.view == nil { location.reset(in: mirror, into: &out) } }
        case .drop:
            if let document = mirror.document { released.append(document) }
            mirror.document = nil
            for view in mirror.views.values { arrangedRows += view.reset(in: mirror) }
            forEachLocation { location, _ in _ = location.currentValue(in: mirror) }
        }
        // A view's changes were made once, for every stream that shows it (a stale view's streams get
        // its snapshot once it is arranged, outside the lock).
        forEachLocation { location, out in
            guard let query = location.view, let view = mirror.views[SharedView.Key(path: location.path, query: query)],
                !view.isStale
            else { return }
            out = view.pending
            location.current = view.position
        }
        for view in mirror.views.values { view.pending = [] }
        mirror.revision = commit.revision
        mirror.sequence = commit.sequence
        mirror.eventID = commit.eventID
        state.metrics.countArranged(underLock: arrangedRows)
        startRearranging(&mirror, of: commit.model, in: &state)
        var woken: [Int] = []
        // A plain location (no window) gets the same event for the same path: one frame per commit,
        // shared by every stream that follows that path, as whole-model streams share theirs.
        var shared: [Path: EventFrame] = [:]
        // A view's events are shared by the streams that wrote it alike (its events name it as written).
        var sharedViews: [String: EventFrame] = [:]
        // A location's events are each stream's own (a window's always): before each frame is made,
        // what every stream holds unsent plus this stream's frames so far must be under the budget;
        // once it is not, this stream and those still to serve start over (`resync`, their snapshots
        // made when they next read) instead of getting more frames.
        var overBudget = false
        for (position, subscriber) in subscribers.enumerated() {
            let stream = subscriber.stream
            if stream.pendingResync != nil { continue }  // it starts over from fresh snapshots anyway
            var frames: [EventFrame] = []
            var added = 0
            if case .drop = commit.kind {
                frames.append(logFrame)
                for index in stream.subscriptions.indices {
                    stream.subscriptions[index].reported = stream.subscriptions[index].current
                }
            } else {
                for index in stream.subscriptions.indices where stream.subscriptions[index].model == commit.model {
                    let changes = outputs[position][index]
                    let path = stream.subscriptions[index].path
                    let viewKey = stream.subscriptions[index].view == nil ? nil : stream.subscriptions[index].name
                    let plain = stream.subscriptions[index].window == nil && viewKey == nil
                    if plain {
                        guard !changes.isEmpty else { continue }
                    }
                    if overBudget || !hasRoom(in: &state, adding: added) {
                        overBudget = true
                        break
                    }
                    if let frame = plain ? shared[path] : viewKey.flatMap({ sharedViews[$0] }) {
                        frames.append(frame)
                        added += frame.bytes.count
                        stream.subscriptions[index].reported = stream.subscriptions[index].current
                        continue
                    }
                    var bytes: [UInt8] = []
                    encodeEvent(of: &stream.subscriptions[index], changes, commit: commit, into: &bytes)
                    guard !bytes.isEmpty else { continue }
                    let frame = EventFrame(
                        sequence: commit.sequence, id: commit.eventID, model: commit.model, isCommit: false, bytes: bytes)
                    if plain { shared[path] = frame } else if let viewKey { sharedViews[viewKey] = frame }
                    frames.append(frame)
                    added += frame.bytes.count
                }
            }
            if overBudget {
                stream.dropDerived(resync: .lagging)
                woken.append(subscriber.id)
                continue
            }
            guard !frames.isEmpty else { continue }
            for frame in frames {
                stream.queue(frame)
                state.budget.add(frame.bytes.count)
            }
            // A stream that falls this far behind gets `resync` and fresh snapshots, as one that fell
            // off the shared log does: what it holds stays bounded however slowly it reads.
            if stream.derivedBytes - stream.derivedSnapshotBytes > settings.retainedBytes {
                stream.dropDerived(resync: .lagging)
            }
            woken.append(subscriber.id)
        }
        keepWithinBudget(subscribers.map(\.stream))
        wakeAll(woken, in: &state, into: &wake)
        keepViewRows(of: commit.model, &mirror, in: &state, waking: &wake)
    }

    /// Encodes what one commit did at one location: its changes with the window after them, or a
    /// `length` event when only the window's array length or offset moved.
    private func encodeEvent(
        of location: inout Subscription, _ changes: [LocationChange], commit: Commit,
        into bytes: inout [UInt8]
    ) {
        let window = location.window == nil && location.view == nil ? nil : location.current
        if !changes.isEmpty {
            EventEncoder.appendLocationChanges(
                changes, model: commit.model, revision: commit.revision,
                sequence: commit.eventID, window: window, view: location.viewText, into: &bytes)
        } else if let window, window != location.reported {
            EventEncoder.appendLength(
                model: commit.model, revision: commit.revision, sequence: commit.eventID,
                path: location.path, window: window, view: location.viewText, into: &bytes)
        }
        location.reported = location.current
    }

    /// Every write to a model costs each of its location streams an event of its own: with many streams
    /// that read nothing, those add up faster than the heartbeat cuts them. When the streams of one
    /// model hold more than the unsent-bytes budget in their own events, the fattest of those holding
    /// more than `streamBufferLimit` drop them and start over with `resync` when they next read (their
    /// snapshots are made then, so a client that never reads costs nothing more).
    private func keepWithinBudget(_ streams: [Subscriber]) {
        var total = streams.reduce(0) { $0 + $1.derivedBytes }
        guard total > settings.maxUnsentBytes else { return }
        for stream in streams.sorted(by: { $0.derivedBytes > $1.derivedBytes }) {
            guard total > settings.maxUnsentBytes / 2, stream.derivedBytes > settings.streamBufferLimit else { break }
            total -= stream.derivedBytes
            stream.dropDerived(resync: .lagging)
        }
    }

    func wakeAll(_ ids: [Int], in state: inout State, into wake: inout [any HTTPStreamConnection]) {
        for id in ids where state.suspended.contains(id) {
            state.suspended.remove(id)
            // Its own frames woke it, not the log's: none of the log's frames since it slept woke it
            // (nor does this commit's, as it follows the model by location, not whole).
            state.subscribers[id]?.wake(skippingTo: state.log.endPosition)
            if let connection = state.subscribers[id]?.connection { wake.append(connection) }
        }
    }
}
