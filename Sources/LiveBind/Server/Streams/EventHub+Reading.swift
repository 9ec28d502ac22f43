import LiveBindEngine
internal import LiveBindHTTP
extension EventHub {
    private enum Step {
        case done(HTTPStreamRead)
        case resync(ResyncReason, ModelFilter)
    }

    /// Fills `buffer` for subscriber `id`: its unfinished frame, its preface, then every log frame it
    /// wants, as many as fit (one send for many events). Suspends it when there is nothing to send.
    /// Called on a libmicrohttpd worker thread; never twice at once for one subscriber.
    func read(
        _ id: Int, into buffer: UnsafeMutableRawBufferPointer,
        connection: any HTTPStreamConnection
    ) -> HTTPStreamRead {
        while true {
            switch step(id, buffer, connection) {
            case .done(let result):
                return result
            case .resync(let reason, let models):
                if !restart(id, reason: reason, key: snapshotKey(for: models), from: nil) {
                    // A fresh snapshot is charged to the budget before it is made; when it does not
                    // fit, the stream ends (its client reconnects with `Last-Event-ID`).
                    let cut = snapshotCut(models: models)
                    do throws(RequestError) {
                        try reserve(cut.bytes)
                    } catch {
                        end(id)
                        continue
                    }
                    _ = restart(id, reason: reason, key: nil, from: encodeSnapshot(cut), reserved: cut.bytes)
                }
            }
        }
    }

    /// Gives subscriber `id` `resync` and snapshots: `fresh` (or one another stream shared meanwhile),
    /// or without `fresh` only a shared one with content `key`. False when there was none to share.
    /// Never a snapshot older than an id the stream sent: its ids would go backwards.
    ///
    /// `reserved`: the bytes charged to the budget for `fresh`, given back once it is queued.
    private func restart(
        _ id: Int, reason: ResyncReason, key: SnapshotKey?,
        from fresh: (frame: EventFrame, key: SnapshotKey)?, reserved: Int = 0
    ) -> Bool {
        let pending: [PendingSnapshot]? = state.withLock { state in
            state.budget.release(reserved)
            guard let subscriber = state.subscribers[id] else { return [] }
            let notBefore = subscriber.lastSentID
            let snapshot =
                if let fresh { adopt(fresh, notBefore: notBefore, in: &state) } else {
                    key.flatMap { sharedSnapshot(for: $0, notBefore: notBefore, in: &state) }
                }
            guard let snapshot else { return nil }
            subscriber.preface.append(Self.resyncFrame(reason))
            start(subscriber, at: snapshot, in: &state)
            state.metrics.resyncs += 1
            if reason == .lagging { state.metrics.laggingClients += 1 }
            return snapshotLocations(of: subscriber, id: id, in: &state)
        }
        guard let pending else { return false }
        // Refused: the stream ended, and its next step says so.
        try? finishSnapshots(pending)
        return true
    }

    /// Stream `id` is about to send part of its replay (`/events?since=`, held by `EventStream`, not
    /// by the hub) through `connection`: the hub learns its connection, so that a stream whose client
    /// reads nothing can be cut (`makeRoom`, the heartbeat) while its replay holds the budget, and the
    /// stream counts as read. False when it was cut or is gone: it sends nothing more.
    func sendsPrefix(_ id: Int, connection: any HTTPStreamConnection) -> Bool {
        state.withLock { state in
            guard let subscriber = state.subscribers[id], !subscriber.isCut else { return false }
            subscriber.learn(connection)
            subscriber.lastWriteRound = state.heartbeatRound
            return true
        }
    }

    /// Ends stream `id` from its own read: it drops what it holds, and its next step ends the response.
    private func end(_ id: Int) {
        state.withLock { state in
            guard let subscriber = state.subscribers[id] else { return }
            subscriber.end()
            state.metrics.budgetCuts += 1
        }
    }

    private func step(
        _ id: Int, _ buffer: UnsafeMutableRawBufferPointer,
        _ connection: any HTTPStreamConnection
    ) -> Step {
        state.withLock { state in
            guard !state.shuttingDown, let subscriber = state.subscribers[id], !subscriber.isCut else { return .done(.end) }
            subscriber.learn(connection)
            var written = 0
            var partial: Subscriber.Partial?
            /// Copies what fits of `frame` from `offset` (without its `id:` line when `withoutID`); false
            /// (and a partial) when it did not all fit. It leaves `subscriber` alone: capturing it with
            /// `buffer` would tie the hub's state to the caller's.
            func emit(_ frame: EventFrame, from offset: Int, withoutID: Bool) -> Bool {
                var offset = offset
                let skipped = withoutID ? frame.idLine : nil
                while offset < frame.bytes.count {
                    if let skipped, skipped.contains(offset) { offset = skipped.upperBound; continue }
                    let end = skipped.map { $0.lowerBound > offset ? $0.lowerBound : frame.bytes.count } ?? frame.bytes.count
                    let count = min(end - offset, buffer.count - written)
                    frame.bytes.withUnsafeBytes { source in
                        (buffer.baseAddress! + written).copyMemory(from: source.baseAddress! + offset, byteCount: count)
                    }
                    written += count
                    offset += count
                    if offset < end {
                        partial = Subscriber.Partial(frame: frame, offset: offset, withoutID: withoutID)
                        return false
                    }
                }
                return true
            }
            let unfinished = subscriber.partial
            defer {
                subscriber.partial = partial
                state.metrics.bytesSent += written
                if written > 0 { subscriber.lastWriteRound = state.heartbeatRound }
            }
            if let unfinished {
                if !emit(unfinished.frame, from: unfinished.offset, withoutID: unfinished.withoutID) { return .done(.bytes(written)) }
            }
            while !subscriber.preface.isEmpty {
                let frame = subscriber.preface.removeFirst()
                let continues =
                    frame.idLine != nil
                    && (subscriber.preface.first(where: { $0.idLine != nil }).map { $0.id == frame.id }
                        ?? groupContinues(frame.id, for: subscriber, in: state.log))
                let withoutID = !subscriber.takesID(of: frame, continued: continues)
                if !emit(frame, from: 0, withoutID: withoutID) { return .done(.bytes(written)) }
            }
            // Revoked: its `auth_revoked` went out with the preface; nothing else may follow.
            if subscriber.isRevoked { return .done(written > 0 ? .bytes(written) : .end) }
            // A location's snapshot is being encoded: nothing of what follows it may go first.
            // `finishSnapshots` wakes the stream.
            if subscriber.pendingSnapshots > 0 {
                if written > 0 { return .done(.bytes(written)) }
                subscriber.isHeldBack = true
                state.suspended.insert(id, filter: ModelFilter(names: []))
                connection.suspend()
                return .done(.suspended)
            }
            subscriber.isHeldBack = false
            // A stream of locations only wants nothing from the shared log: it is never behind it.
            if subscriber.models.names?.isEmpty == true { subscriber.position = state.log.endPosition }
            if subscriber.position < state.log.basePosition || subscriber.pendingResync != nil {
                if written > 0 { return .done(.bytes(written)) }
                // Starting over takes fresh snapshots: with the unsent-bytes budget spent the stream ends
                // instead, and its client reconnects with `Last-Event-ID`, admitted or refused (503) as
                // any new stream is.
                guard hasRoom(in: &state) else {
                    state.metrics.budgetCuts += 1
                    return .done(.end)
                }
                let reason = subscriber.pendingResync ?? .lagging
                subscriber.pendingResync = nil
                return .resync(reason, subscriber.models)
            }
            while true {
                // The stream's own frames and the log's, merged in sequence order. An own frame of a
                // commit the log does not have yet (a location snapshot taken from the store ahead of
                // the hub) waits for it, so that no older event can follow it. A location's snapshot
                // goes after the log's frame of its own id (it applies at once: before, it would show
                // a write to several models before that frame, the write's last event, came).
                let next = subscriber.position < state.log.endPosition ? state.log[subscriber.position] : nil
                if let own = subscriber.derived.first, own.sequence <= state.log.newestSequence,
                    next.map({ own.sequence < $0.sequence || own.sequence == $0.sequence && own.model != nil }) ?? true
                {
                    subscriber.removeFirstDerived()
                    let withoutID = !subscriber.takesID(of: own, continued: groupContinues(own.id, for: subscriber, in: state.log))
                    if !emit(own, from: 0, withoutID: withoutID) { return .done(.bytes(written)) }
                    continue
                }
                guard let frame = next else { break }
                subscriber.position += 1
                if frame.isCommit && frame.sequence <= subscriber.lastSequence { continue }
                guard frame.isWanted(by: subscriber.models) else { continue }
                if frame.isCommit { subscriber.lastSequence = frame.sequence }
                let withoutID = !subscriber.takesID(of: frame, continued: groupContinues(frame.id, for: subscriber, in: state.log))
                if !emit(frame, from: 0, withoutID: withoutID) { return .done(.bytes(written)) }
            }
            if written > 0 { return .done(.bytes(written)) }
            if let own = subscriber.derived.first { state.awaiting[id] = own.sequence }
            state.suspended.insert(id, filter: subscriber.models)
            connection.suspend()
            return .done(.suspended)
        }
    }

    /// Whether a frame `subscriber` sends after the one just taken, with an id line, is already known
    /// to have the id `id` (so the two close one group). Frames come in sequence order from its own
    /// frames and from the log, and the frames of one id are published together (one commit's, or the
    /// commits of one write to several models, which follow each other in the log): so the head of its
    /// own frames and the log's frames from its position that have that id are enough to look at. A
    /// location's snapshot (a frame of no model) restates a point and applies at once: it belongs to
    /// no group, so it continues none.
    private func groupContinues(_ id: UInt64, for subscriber: Subscriber, in log: EventLog) -> Bool {
        if let own = subscriber.derived.first, own.idLine != nil, own.model != nil, own.id == id { return true }
        guard subscriber.position >= log.basePosition, subscriber.models.names?.isEmpty != true else { return false }
        var position = subscriber.position
        while position < log.endPosition {
            let frame = log[position]
            guard frame.id == id else { return false }
            if frame.isWanted(by: subscriber.models) && !(frame.isCommit && frame.sequence <= subscriber.lastSequence) { return true }
            position += 1
        }
        return false
    }
}
