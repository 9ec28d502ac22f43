extension EventHub {
    private enum Step {
        case done(HTTPStreamRead)
        case resync(ResyncReason, ModelFilter)
    }

    /// Fills `buffer` for subscriber `id`: its unfinished frame, its preface, then every log frame it
    /// wants, as many as fit (one send for many events). Suspends it when there is nothing to send.
    /// Called on a libmicrohttpd worker thread; never twice at once for one subscriber.
    func read(_ id: Int, into buffer: UnsafeMutableRawBufferPointer,
              connection: any HTTPStreamConnection) -> HTTPStreamRead {
        while true {
            switch step(id, buffer, connection) {
            case .done(let result):
                return result
            case .resync(let reason, let models):
                if !restart(id, reason: reason, from: nil) {
                    _ = restart(id, reason: reason, from: encodeSnapshot(models: models))
                }
            }
        }
    }

    /// Gives subscriber `id` `resync` and snapshots: `fresh` (or one another stream shared meanwhile),
    /// or without `fresh` only a shared one. False when there was none to share.
    private func restart(_ id: Int, reason: ResyncReason, from fresh: EventFrame?) -> Bool {
        state.withLock { state in
            guard let subscriber = state.subscribers[id] else { return true }
            let snapshot = if let fresh { adopt(fresh, for: subscriber.models, in: &state) }
                           else { sharedSnapshot(for: subscriber.models, in: &state) }
            guard let snapshot else { return false }
            subscriber.preface.append(Self.resyncFrame(reason))
            start(subscriber, at: snapshot, in: &state)
            snapshotLocations(of: subscriber, in: &state)
            state.metrics.resyncs += 1
            if reason == .lagging { state.metrics.laggingClients += 1 }
            return true
        }
    }

    private func step(_ id: Int, _ buffer: UnsafeMutableRawBufferPointer,
                      _ connection: any HTTPStreamConnection) -> Step {
        state.withLock { state in
            guard !state.shuttingDown, let subscriber = state.subscribers[id], !subscriber.isCut else { return .done(.end) }
            if subscriber.connection == nil {
                subscriber.connection = connection
                subscriber.directWriter = connection as? any SuspendedStreamWriting
            }
            var written = 0
            var partial: (frame: EventFrame, offset: Int)?
            /// Copies what fits of `frame` from `offset`; false (and a partial) when it did not all fit.
            /// It leaves `subscriber` alone: capturing it with `buffer` would tie the hub's state to the caller's.
            func emit(_ frame: EventFrame, from offset: Int) -> Bool {
                let count = min(frame.bytes.count - offset, buffer.count - written)
                frame.bytes.withUnsafeBytes { source in
                    (buffer.baseAddress! + written).copyMemory(from: source.baseAddress! + offset, byteCount: count)
                }
                written += count
                if offset + count < frame.bytes.count {
                    partial = (frame, offset + count)
                    return false
                }
                return true
            }
            let unfinished = subscriber.partial
            defer {
                subscriber.partial = partial
                state.metrics.bytesSent += written
                if written > 0 { subscriber.lastWriteRound = state.heartbeatRound }
            }
            if let (frame, offset) = unfinished {
                if !emit(frame, from: offset) { return .done(.bytes(written)) }
            }
            while !subscriber.preface.isEmpty {
                if !emit(subscriber.preface.removeFirst(), from: 0) { return .done(.bytes(written)) }
            }
            // Revoked: its `auth_revoked` went out with the preface; nothing else may follow.
            if subscriber.isRevoked { return .done(written > 0 ? .bytes(written) : .end) }
            // A stream of locations only wants nothing from the shared log: it is never behind it.
            if subscriber.models.names?.isEmpty == true { subscriber.position = state.endPosition }
            if subscriber.position < state.basePosition || subscriber.pendingResync != nil {
                if written > 0 { return .done(.bytes(written)) }
                let reason = subscriber.pendingResync ?? .lagging
                subscriber.pendingResync = nil
                return .resync(reason, subscriber.models)
            }
            while true {
                // The stream's own frames and the log's, merged in sequence order.
                let next = subscriber.position < state.endPosition ? state.log[subscriber.position - state.basePosition] : nil
                if let own = subscriber.derived.first, next.map({ own.sequence <= $0.sequence }) ?? true {
                    subscriber.derived.removeFirst()
                    subscriber.derivedBytes -= own.bytes.count
                    if !emit(own, from: 0) { return .done(.bytes(written)) }
                    continue
                }
                guard let frame = next else { break }
                subscriber.position += 1
                if frame.isCommit && frame.sequence <= subscriber.lastSequence { continue }
                guard frame.isWanted(by: subscriber.models) else { continue }
                if frame.isCommit { subscriber.lastSequence = frame.sequence }
                if !emit(frame, from: 0) { return .done(.bytes(written)) }
            }
            if written > 0 { return .done(.bytes(written)) }
            state.suspended.insert(id, filter: subscriber.models)
            connection.suspend()
            return .done(.suspended)
        }
    }
}
