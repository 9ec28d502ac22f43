import Foundation
import LiveBindEngine
internal import LiveBindHTTP

extension EventHub {
    /// Registers a stream for the models `models` lets through, starting after `lastEventID` when given.
    ///
    /// A resume whose events are all retained starts right after `lastEventID`; otherwise the stream
    /// starts with `resync` (gap or restart) and snapshots: the frame another stream at the same cut
    /// holds, else a fresh one. Throws when the limit is reached.
    ///
    /// With `locations` (or `announced`, for a stream whose `sub` values are all whole models) the
    /// stream's second frame is its `stream` id, and each location gets a fresh snapshot after the
    /// whole models' frames, resumed or not: a window cannot be replayed without the array as it was,
    /// and a client reconnecting with its first URL may since have moved its window.
    ///
    /// A stream whose credential expires at `expiresAt` gets `auth_revoked` and ends then; one opened
    /// with a session (`session`) also when that session ends.
    func subscribe(
        models: ModelFilter, lastEventID: String?, resumable: Bool = true, locations: [Subscription] = [],
        announced: Bool = false, expiresAt: Date? = nil,
        session: SessionTable.Key? = nil
    ) throws(RequestError) -> Int {
        let id = try subscribe(
            models: models, lastEventID: resumable ? lastEventID : nil, restarted: !resumable && lastEventID != nil,
            locations: locations, announced: announced, session: session)
        if let expiresAt { expiry.add(id, at: expiresAt) }
        return id
    }

    private func subscribe(
        models: ModelFilter, lastEventID: String?, restarted: Bool, locations: [Subscription],
        announced: Bool, session: SessionTable.Key?
    ) throws(RequestError) -> Int {
        let announced = announced || !locations.isEmpty
        try checkAdmission()
        let arranged = try arrangeViews(locations)
        defer { finishArranging(arranged) }
        var resumeAfter: UInt64?
        var reason: ResyncReason? = restarted ? .restart : nil
        if let lastEventID {
            // Decimal digits only, as the server writes ids: `+110` names no event (UInt64 reads it).
            let text = lastEventID.trimmingWhitespace()
            if text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let sequence = UInt64(text) {
                if sequence > store.visibleSequence { reason = .restart } else { resumeAfter = sequence }
            } else {
                reason = .gap
            }
        }
        if let resumeAfter {
            var fromAnotherRun = false
            let id: Int? = try register(locations, announced, arranged) { state in
                guard resumeAfter >= state.log.droppedThrough else {
                    fromAnotherRun = state.log.runStart.map { resumeAfter < $0 } ?? false
                    return nil
                }
                return Subscriber(
                    models: models, position: state.log.firstPosition(after: resumeAfter),
                    lastSequence: resumeAfter, preface: [retryFrame], round: state.heartbeatRound,
                    session: session)
            }
            if let id { return id }
            reason = fromAnotherRun ? .restart : .gap
        }
        /// A subscriber that starts from `snapshot`, with `resync` first when there is a reason.
        func starting(at snapshot: EventFrame, in state: inout State) -> Subscriber {
            var preface = [retryFrame]
            if let reason {
                preface.append(Self.resyncFrame(reason))
                state.metrics.resyncs += 1
            }
            let subscriber = Subscriber(
                models: models, position: state.log.endPosition, lastSequence: 0,
                preface: preface, round: state.heartbeatRound, session: session)
            start(subscriber, at: snapshot, in: &state)
            // After `resync`, snapshots of no model (none of the stream's exists: a restart emptied
            // them): the cut's id alone ends the group, so the client knows its models are gone.
            if reason != nil, snapshot.bytes.isEmpty {
                subscriber.preface.append(
                    EventFrame(sequence: snapshot.sequence, model: nil, isCommit: false, bytes: Array("id: \(snapshot.sequence)\n\n".utf8)))
            }
            return subscriber
        }
        let key = snapshotKey(for: models)
        let id: Int? = try register(locations, announced, arranged) { state in
            sharedSnapshot(for: key, in: &state).map { starting(at: $0, in: &state) }
        }
        if let id { return id }
        try checkAdmission()
        // Charged to the budget before it is made: a snapshot larger than it is refused (413).
        let cut = snapshotCut(models: models)
        let bytes = cut.bytes
        try reserve(bytes)
        var reserved = bytes
        defer { release(reserved) }
        let fresh = encodeSnapshot(cut)
        return try register(locations, announced, arranged) { state in
            // Queued now, so counted as unsent: no longer charged twice (the locations' snapshots follow).
            state.budget.release(reserved)
            reserved = 0
            return starting(at: adopt(fresh, in: &state), in: &state)
        }!
    }

    /// Throws unless a new stream may open: the server is running, under `maxStreams`, and under the
    /// unsent-bytes budget (after cutting streams whose clients read nothing, see `makeRoom`).
    private func checkAdmission() throws(RequestError) {
        try state.withLock { (state) throws(RequestError) in
            if state.shuttingDown { throw .shuttingDown }
            if state.subscribers.count >= settings.maxStreams {
                state.metrics.rejectedStreams += 1
                throw .tooManyStreams(limit: settings.maxStreams)
            }
            if !makeRoom(in: &state) {
                state.metrics.rejectedStreams += 1
                throw .unsentBytesSpent(limit: settings.maxUnsentBytes)
            }
        }
    }

    /// Adds the subscriber `make` builds (nil = not possible from here) under the lock, with its locations.
    private func register(
        _ locations: [Subscription], _ announced: Bool, _ arranged: [ArrangedView],
        _ make: (inout State) -> Subscriber?
    ) throws(RequestError) -> Int? {
        let registered = try state.withLock { (state) throws(RequestError) -> (id: Int, pending: [PendingSnapshot])? in
            if state.shuttingDown { throw .shuttingDown }
            if state.subscribers.count >= settings.maxStreams {
                state.metrics.rejectedStreams += 1
                throw .tooManyStreams(limit: settings.maxStreams)
            }
            if announced { try checkViews(locations, in: state, reserved: arranged) }
            guard let subscriber = make(&state) else { return nil }
            state.nextID += 1
            state.subscribers[state.nextID] = subscriber
            openStreams.store(state.subscribers.count, ordering: .relaxed)
            state.metrics.streamsOpened += 1
            guard announced else { return (state.nextID, []) }
            subscriber.subscriptions = locations
            return (state.nextID, attach(state.nextID, subscriber, arranged: arranged, in: &state))
        }
        guard let registered else { return nil }
        do {
            try finishSnapshots(registered.pending)
        } catch {
            // Its snapshots do not fit the budget: the stream was never answered, it goes.
            close(registered.id)
            throw error
        }
        return registered.id
    }

    /// Queues `bytes`, one event of the stream's own (a notice about the request that opened it),
    /// after what the stream starts with: its snapshots and its `stream` event.
    func notify(_ id: Int, _ bytes: [UInt8]) {
        state.withLock { state in
            state.subscribers[id]?.preface.append(EventFrame(sequence: 0, model: nil, isCommit: false, bytes: bytes))
        }
    }
}
