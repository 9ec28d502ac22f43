import LiveBindEngine
internal import LiveBindHTTP

/// A stream's locations (`?sub=model/pointer`, windows of arrays, views): the mirrors and views they
/// hold while the stream is open (`attach`, `detach`), their snapshots when it starts or starts over,
/// and a window moved by `PATCH /events/{id}` (`moveWindow`). The events each commit makes for them
/// are `EventHub+LocationEvents`'s.
extension EventHub {
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
