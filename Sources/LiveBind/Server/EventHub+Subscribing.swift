extension EventHub {
    /// Registers a stream for the models `models` lets through, starting after `lastEventID` when given.
    ///
    /// A resume whose events are all retained starts right after `lastEventID`; otherwise the stream
    /// starts with `resync` (gap or restart) and fresh snapshots. Throws when the limit is reached.
    func subscribe(models: ModelFilter, lastEventID: String?) throws(RequestError) -> Int {
        try checkAdmission()
        var preface = [EventFrame(sequence: 0, model: nil, isCommit: false,
                                  bytes: EventEncoder.retry(milliseconds: settings.retryMilliseconds))]
        var resumeAfter: UInt64?
        var reason: ResyncReason?
        if let lastEventID {
            if let sequence = UInt64(lastEventID.trimmingWhitespace()) {
                if sequence > store.lastSequence { reason = .restart } else { resumeAfter = sequence }
            } else {
                reason = .gap
            }
        }
        if let resumeAfter {
            var fromAnotherRun = false
            let id: Int? = try register { state in
                guard resumeAfter >= state.droppedThrough else {
                    fromAnotherRun = state.runStart.map { resumeAfter < $0 } ?? false
                    return nil
                }
                return Subscriber(models: models, position: state.firstPosition(after: resumeAfter),
                                  lastSequence: resumeAfter, preface: preface, round: state.heartbeatRound)
            }
            if let id { return id }
            reason = fromAnotherRun ? .restart : .gap
        }
        let (sequence, snapshot) = snapshotFrame(models: models, reason: reason)
        preface.append(snapshot)
        let id: Int? = try register { state in
            let subscriber = Subscriber(models: models, position: state.firstPosition(after: sequence),
                                        lastSequence: sequence, preface: preface, round: state.heartbeatRound)
            if state.droppedThrough > sequence { subscriber.pendingResync = .lagging }
            if reason != nil { state.metrics.resyncs += 1 }
            return subscriber
        }
        return id!
    }

    /// One private frame: an optional `resync` followed by a `snapshot` per model, all with the cut's id.
    func snapshotFrame(models: ModelFilter, reason: ResyncReason?) -> (UInt64, EventFrame) {
        let cut = store.snapshot(models: models.names.map { Array($0) })
        var bytes = reason.map(EventEncoder.resync) ?? []
        for model in cut.models where models.wants(model.name) { EventEncoder.appendSnapshot(model, sequence: cut.sequence, into: &bytes) }
        return (cut.sequence, EventFrame(sequence: cut.sequence, model: nil, isCommit: false, bytes: bytes))
    }

    private func checkAdmission() throws(RequestError) {
        try state.withLock { (state) throws(RequestError) in
            if state.shuttingDown { throw .shuttingDown }
            if state.subscribers.count >= settings.maxStreams {
                state.metrics.rejectedStreams += 1
                throw .tooManyStreams(limit: settings.maxStreams)
            }
        }
    }

    /// Adds the subscriber `make` builds (nil = not possible from here) under the lock.
    private func register(_ make: (inout State) -> Subscriber?) throws(RequestError) -> Int? {
        try state.withLock { (state) throws(RequestError) -> Int? in
            if state.shuttingDown { throw .shuttingDown }
            if state.subscribers.count >= settings.maxStreams {
                state.metrics.rejectedStreams += 1
                throw .tooManyStreams(limit: settings.maxStreams)
            }
            guard let subscriber = make(&state) else { return nil }
            state.nextID += 1
            state.subscribers[state.nextID] = subscriber
            state.metrics.streamsOpened += 1
            return state.nextID
        }
    }
}
