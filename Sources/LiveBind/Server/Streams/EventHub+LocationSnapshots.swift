import LiveBindEngine
internal import LiveBindHTTP
/// Location and window snapshots, encoded outside the hub's lock.
///
/// A location's snapshot can be as large as its model (16 MiB by default), and encoding it takes tens
/// of milliseconds: under the hub's lock that would hold every stream's fan-out back, once per stream
/// that opens or moves a window to other rows. So what a snapshot shows is taken under the lock (the
/// mirror's value, copy-on-write, and the window's rows), and the bytes are made after it is released,
/// then queued under it again. Until then the stream sends nothing past its preface, so nothing that
/// follows the snapshot can go before it; a snapshot overtaken by a newer one of the same location (a
/// window moved again, the stream started over) is dropped.
extension EventHub {
    /// A location snapshot to encode once the lock is released.
    struct PendingSnapshot: Sendable {
        let stream: Int
        let location: Int
        let generation: Int
        let key: LocationSnapshots.Key
        let revision: UInt64
        let value: JSON
        let exists: Bool
    }

    /// Takes the snapshot of location `index` of `subscriber` (stream `id`): queues the frame another
    /// stream holds for the same rows at the same id, or returns what to encode. Called with the lock held.
    func takeSnapshot(ofLocation index: Int, of subscriber: Subscriber, id: Int, in state: inout State) -> PendingSnapshot? {
        let model = subscriber.subscriptions[index].model
        let mirror = state.mirrors[model]!
        // A view being arranged outside the lock: its snapshot is taken once it is (`finishRearranging`).
        if let query = subscriber.subscriptions[index].view,
            mirror.views[SharedView.Key(path: subscriber.subscriptions[index].path, query: query)]?.isStale == true
        {
            subscriber.holdForArrangement(index)
            return nil
        }
        // The id of the model's last commit the mirror holds (or of the store's cut it was made from;
        // of the whole write, when that wrote several models: it then follows the write's events on a
        // stream, never splits them): the location is the same at every later id up to the model's
        // next commit, so streams opening meanwhile share one frame, whatever other models do.
        let sequence = mirror.eventID
        subscriber.subscriptions[index].snapshotGeneration += 1
        let (value, exists) = subscriber.subscriptions[index].currentValue(in: mirror)
        let location = subscriber.subscriptions[index]
        subscriber.subscriptions[index].reported = location.current
        let key = LocationSnapshots.Key(
            model: model, path: location.path, sequence: sequence,
            rows: location.window.map { $0.rows(length: location.current.length) },
            window: location.window == nil && location.view == nil ? nil : location.current,
            view: location.viewText)
        if let frame = state.locationSnapshots.frame(for: key) {
            state.metrics.snapshotsShared += 1
            subscriber.queue(frame)
            state.budget.add(frame.bytes.count)
            return nil
        }
        subscriber.pendingSnapshots += 1
        return PendingSnapshot(
            stream: id, location: index, generation: location.snapshotGeneration, key: key,
            revision: mirror.revision, value: value, exists: exists)
    }

    /// Encodes `pending` (without the lock), then queues each frame on its stream, unless the stream
    /// ended or took a newer snapshot of that location meanwhile, and wakes the streams waiting for them.
    ///
    /// The frames are charged to the budget before they are made (see `reserve`): when they do not
    /// fit, none is made, the streams they were for end (their clients reconnect with `Last-Event-ID`,
    /// admitted or refused as any new stream), and the refusal is thrown.
    func finishSnapshots(_ pending: [PendingSnapshot]) throws(RequestError) {
        guard !pending.isEmpty else { return }
        let bytes = Self.measure(pending)
        do {
            try reserve(bytes)
        } catch {
            endStreams(awaiting: pending)
            throw error
        }
        defer { release(bytes) }
        let frames = pending.map { snapshot in
            var bytes: [UInt8] = []
            EventEncoder.appendLocationSnapshot(
                model: snapshot.key.model, revision: snapshot.revision,
                sequence: snapshot.key.sequence, path: snapshot.key.path,
                value: snapshot.value, exists: snapshot.exists,
                window: snapshot.key.window, view: snapshot.key.view, into: &bytes)
            return EventFrame(sequence: snapshot.key.sequence, model: nil, isCommit: false, bytes: bytes)
        }
        let wake: [any HTTPStreamConnection] = state.withLock { state in
            var wake: [any HTTPStreamConnection] = []
            for (snapshot, fresh) in zip(pending, frames) {
                guard let subscriber = state.subscribers[snapshot.stream] else { continue }
                subscriber.pendingSnapshots -= 1
                if !subscriber.isCut, snapshot.location < subscriber.subscriptions.count,
                    subscriber.subscriptions[snapshot.location].snapshotGeneration == snapshot.generation
                {
                    let frame: EventFrame
                    if let shared = state.locationSnapshots.frame(for: snapshot.key) {
                        frame = shared
                        state.metrics.snapshotsShared += 1
                    } else {
                        frame = fresh
                        state.locationSnapshots.share(fresh, for: snapshot.key)
                        state.metrics.snapshotsEncoded += 1
                    }
                    subscriber.queue(frame)
                    state.budget.add(frame.bytes.count)
                }
                // Held back, not at the log's end: woken where it stands.
                if subscriber.pendingSnapshots == 0, state.suspended.contains(snapshot.stream) {
                    state.suspended.remove(snapshot.stream)
                    if let connection = subscriber.connection { wake.append(connection) }
                }
            }
            return wake
        }
        for connection in wake { connection.resume() }
    }

    /// Ends the streams `pending` were for, which will not get them: each drops what it holds, and one
    /// held back waiting for them is woken to end.
    private func endStreams(awaiting pending: [PendingSnapshot]) {
        let wake: [any HTTPStreamConnection] = state.withLock { state in
            var wake: [any HTTPStreamConnection] = []
            var ended = Set<Int>()
            for snapshot in pending {
                guard let subscriber = state.subscribers[snapshot.stream] else { continue }
                subscriber.pendingSnapshots -= 1
                subscriber.end()
                if ended.insert(snapshot.stream).inserted { state.metrics.budgetCuts += 1 }
                if state.suspended.contains(snapshot.stream) {
                    state.suspended.remove(snapshot.stream)
                    if let connection = subscriber.connection { wake.append(connection) }
                }
            }
            return wake
        }
        for connection in wake { connection.resume() }
    }
}
