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

    /// A mirror of `model` as the store shows it now. Takes the store's lock inside the hub's: the
    /// store never calls the hub with its lock held, and a commit is published only once visible, so
    /// the cut includes every commit the hub has published.
    func makeMirror(_ model: String, subscribers: Set<Int>) -> ModelMirror {
        let cut = store.visibleSnapshot(models: [model])
        let snapshot = cut.models.first
        return ModelMirror(
            document: snapshot?.value, revision: snapshot?.revision ?? 0, sequence: cut.sequence,
            eventID: cut.sequence, subscribers: subscribers)
    }

    /// Gives a new subscriber with `sub` values its stream id (the `stream` event, right after the
    /// `retry:` line) and its locations' snapshots (after anything in its preface). Called by `register`
    /// with the lock held, once the subscriber has its id; returns the snapshots to encode after it.
    func attach(_ id: Int, _ subscriber: Subscriber, arranged: [ArrangedView], in state: inout State) -> [PendingSnapshot] {
        var streamID = Self.makeStreamID()
        while state.streams[streamID] != nil { streamID = Self.makeStreamID() }
        state.streams[streamID] = id
        subscriber.streamID = streamID
        subscriber.preface.insert(
            EventFrame(
                sequence: 0, model: nil, isCommit: false,
                bytes: EventEncoder.stream(id: streamID, maxWindow: settings.maxWindow)), at: 1)
        for location in subscriber.subscriptions {
            if state.mirrors[location.model] == nil { state.mirrors[location.model] = makeMirror(location.model, subscribers: []) }
            state.mirrors[location.model]!.subscribers.insert(id)
            if let query = location.view {
                let key = SharedView.Key(path: location.path, query: query)
                if state.mirrors[location.model]!.views[key] == nil {
                    let mirror = state.mirrors[location.model]!
                    state.mirrors[location.model]!.views[key] = makeView(
                        key, of: location.model, from: arranged, in: mirror,
                        metrics: &state.metrics)
                    state.views.shown += 1
                }
                state.mirrors[location.model]!.views[key]!.streams += 1
            }
        }
        for model in Set(subscriber.subscriptions.lazy.filter { $0.view != nil }.map(\.model)) {
            var mirror = state.mirrors.removeValue(forKey: model)!
            startRearranging(&mirror, of: model, in: &state)
            state.mirrors[model] = mirror
        }
        return snapshotLocations(of: subscriber, id: id, in: &state)
    }

    /// Queues for `subscriber` (stream `id`) a snapshot of each of its locations, from the mirrors (the
    /// last published state), in place of the location events it still held: they are older. Called
    /// with the lock held, when the stream starts and when it starts over; returns the snapshots to
    /// encode once the lock is released (`finishSnapshots`).
    ///
    /// The frames join the stream's own frames, not its preface: each carries the id of the commit it
    /// shows, so it must follow the older whole-model events a resumed stream still has to send, or the
    /// stream's ids would go backwards and a client resuming from the snapshot's id would skip them.
    func snapshotLocations(of subscriber: Subscriber, id: Int, in state: inout State) -> [PendingSnapshot] {
        guard !subscriber.subscriptions.isEmpty else { return [] }
        subscriber.clearDerived()
        // One frame per location, shared with every stream that snapshots the same rows at the same id.
        // A snapshot restates a point: the reader sends its id only when the stream has not passed it.
        // A mirror made from the store while the hub was behind it is ahead of the log: its snapshots
        // wait for the log to reach their id.
        return subscriber.subscriptions.indices.compactMap { takeSnapshot(ofLocation: $0, of: subscriber, id: id, in: &state) }
    }

    /// Wakes the suspended streams whose next own frame waited for the log to reach `sequence`.
    /// Called by `publish` with the lock held.
    func wakeAwaiting(through sequence: UInt64, in state: inout State, into wake: inout [any HTTPStreamConnection]) {
        let ready = state.awaiting.filter { $0.value <= sequence }.map(\.key)
        for id in ready { state.awaiting[id] = nil }
        wakeAll(ready, in: &state, into: &wake)
    }

    /// Forgets a closed stream's id and its hold on the mirrors; a mirror no stream needs is dropped.
    /// Returns the views no stream shows any more, for the caller to free once the lock is released.
    func detach(_ id: Int, _ subscriber: Subscriber, in state: inout State) -> [SharedView] {
        if let streamID = subscriber.streamID { state.streams[streamID] = nil }
        var dropped: [SharedView] = []
        // Every view first: a model's mirror (with its views) goes once its last location is let go.
        for location in subscriber.subscriptions {
            guard let query = location.view,
                let view = state.mirrors[location.model]?.views[SharedView.Key(path: location.path, query: query)]
            else { continue }
            view.streams -= 1
            if view.streams == 0 {
                state.mirrors[location.model]?.views[view.key] = nil
                state.views.shown -= 1
                dropped.append(view)
            }
        }
        for location in subscriber.subscriptions {
            state.mirrors[location.model]?.subscribers.remove(id)
            dropMirrorIfUnused(location.model, in: &state)
        }
        return dropped
    }

    /// Moves (or sets) the window of the location `name` (`model/pointer`) of the stream `streamID`:
    /// the stream gets, after everything it was sent or holds, a `snapshot` of the new window at the
    /// last published commit, then events in the new coordinates. `authorize` checks the model.
    func moveWindow(
        stream streamID: String, location name: String, to window: Window,
        authorize: (String) throws -> Void
    ) throws {
        let (wake, pending): ((any HTTPStreamConnection)?, PendingSnapshot?) = try state.withLock { state in
            guard let id = state.streams[streamID], let subscriber = state.subscribers[id] else {
                throw RequestError.unknownStream
            }
            guard let index = subscriber.subscriptions.firstIndex(where: { $0.name == name }) else {
                throw RequestError.unknownSubscription(name)
            }
            try authorize(subscriber.subscriptions[index].model)
            if subscriber.subscriptions[index].view != nil {
                throw RequestError.conflictingSubscription(
                    name, "is a view: its offset and limit are part of it (open a stream with the view you want)")
            }
            // A client that moves its window again and again without reading must not pile snapshots
            // up: past its buffer limit, what it holds is dropped and its next read starts over with
            // `resync` and fresh snapshots (made then, with the window where it is by then). Below it,
            // each move may make a snapshot of its own (other rows): all streams' together stay under
            // the budget, cutting streams that read nothing first; a refused move leaves the window.
            let startsOver = subscriber.derivedBytes > settings.streamBufferLimit
            if !startsOver, !makeRoom(in: &state) { throw RequestError.unsentBytesSpent(limit: settings.maxUnsentBytes) }
            subscriber.subscriptions[index].window = window
            var pending: PendingSnapshot?
            if startsOver {
                subscriber.dropDerived(resync: .lagging)
            } else {
                pending = takeSnapshot(ofLocation: index, of: subscriber, id: id, in: &state)
            }
            guard state.suspended.contains(id) else { return (nil, pending) }
            state.suspended.remove(id)
            subscriber.wake(skippingTo: state.log.endPosition)
            return (subscriber.connection, pending)
        }
        wake?.resume()
        // Its snapshot past the budget: the stream ends (see `finishSnapshots`) and the move is refused.
        if let pending { try finishSnapshots([pending]) }
    }

    /// 128 random bits, base64url without padding (22 characters): unguessable, so it is the capability.
    static func makeStreamID() -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var bits = (generator.next() as UInt64, generator.next() as UInt64)
        var characters: [UInt8] = []
        for position in 0..<22 {
            let word = position < 11 ? bits.0 : bits.1
            characters.append(alphabet[Int(word & 63)])
            if position < 11 { bits.0 >>= 6 } else { bits.1 >>= 6 }
        }
        return String(decoding: characters, as: UTF8.self)
    }
}
