import LiveBindEngine
internal import LiveBindHTTP
extension EventHub {
    /// One heartbeat tick; call it twice per heartbeat interval.
    ///
    /// A suspended stream that wrote nothing since the tick before the last gets a heartbeat comment,
    /// so an idle stream gets one per interval, and a client that went away is noticed when it fails.
    /// A stream that wrote anything in that time needs none and is left asleep.
    ///
    /// The comment goes straight to the socket of a stream that can take it that way (plain HTTP only:
    /// over TLS it would bypass the encryption, see `MicroHTTPDConnection.sendsDirectly`), which stays
    /// suspended; any other stream is resumed with the comment as its next frame. Streams are taken
    /// a batch at a time, so that commits and readers wait for at most one batch of sends.
    ///
    /// A quiet stream whose socket holds unacknowledged bytes at two checks `silentPeerRounds` apart
    /// (a whole interval, and at least 2 s) has a peer that acknowledged nothing for that long: the
    /// peer is gone without closing (a laptop asleep, a network lost), and the stream is cut. So a
    /// stream's end is known within three intervals of its peer's silence, not at the connection
    /// timeout.
    ///
    /// A stream that is not suspended (it has something to send) but wrote nothing over the same span
    /// has a client that reads nothing: if it holds more than `streamBufferLimit` bytes, it is cut.
    func heartbeat() {
        let (round, quiet, stalled): (Int, [Int], [Int]) = state.withLock { state in
            state.heartbeatRound += 1
            let quietSince = state.heartbeatRound - 2
            let quiet = state.suspended.ids.filter { state.subscribers[$0]!.lastWriteRound <= quietSince }
            var stalled: [Int] = []
            if state.subscribers.count > state.suspended.count {
                for (id, subscriber) in state.subscribers
                where subscriber.lastWriteRound <= quietSince && !state.suspended.contains(id) {
                    stalled.append(id)
                }
            }
            return (state.heartbeatRound, quiet, stalled)
        }
        var start = 0
        while start < quiet.count {
            let batch = quiet[start..<min(start + Self.heartbeatBatch, quiet.count)]
            start = batch.endIndex
            let wake: [any HTTPStreamConnection] = state.withLock { state in
                guard !state.shuttingDown else { return [] }
                var wake: [any HTTPStreamConnection] = []
                for id in batch {
                    // Woken, closed or written to since the list was made: not quiet any more.
                    guard state.suspended.contains(id), let subscriber = state.subscribers[id],
                        subscriber.lastWriteRound <= round - 2
                    else { continue }
                    // A direct send happens only when every earlier byte was acknowledged.
                    if subscriber.directWriter?.sendWhileSuspended(EventEncoder.heartbeat) == true {
                        subscriber.unacknowledgedSince = nil
                        subscriber.lastWriteRound = round
                        state.metrics.bytesSent += EventEncoder.heartbeat.count
                        state.metrics.heartbeats += 1
                        state.metrics.directHeartbeats += 1
                    } else if let closable = silentPeer(subscriber, round: round) {
                        state.suspended.remove(id)
                        cut(subscriber, in: &state)
                        state.metrics.silentPeerCuts += 1
                        wake.append(closable)
                    } else if let connection = subscriber.connection {
                        state.metrics.heartbeats += 1
                        state.suspended.remove(id)
                        subscriber.wake(skippingTo: state.log.endPosition)
                        subscriber.preface.append(Self.heartbeatFrame)
                        wake.append(connection)
                    }
                }
                return wake
            }
            for connection in wake { connection.resume() }
        }
        if !stalled.isEmpty { cutOverfullStreams(stalled, round: round) }
    }

    /// The connection of `subscriber`, a quiet stream, when its peer has acknowledged nothing at checks
    /// `silentPeerRounds` apart (a whole interval at least): nil while it acknowledges. Called with
    /// the lock held, once the direct heartbeat found bytes unacknowledged or could not be tried.
    private func silentPeer(_ subscriber: Subscriber, round: Int) -> (any ClosableStreamConnection)? {
        guard let closable = subscriber.connection as? any ClosableStreamConnection,
            let waiting = closable.unacknowledgedBytes, waiting > 0
        else {
            subscriber.unacknowledgedSince = nil
            return nil
        }
        let since = subscriber.unacknowledgedSince ?? round
        subscriber.unacknowledgedSince = since
        return round - since >= settings.silentPeerRounds ? closable : nil
    }

    /// Cuts the streams among `ids` that still wrote nothing since the tick before `round` and hold
    /// more than `streamBufferLimit` bytes: their frames are released at once, and their socket is shut
    /// so that libmicrohttpd ends the response (the stream's next read ends it too).
    private func cutOverfullStreams(_ ids: [Int], round: Int) {
        var start = 0
        while start < ids.count {
            let batch = ids[start..<min(start + Self.heartbeatBatch, ids.count)]
            start = batch.endIndex
            state.withLock { state in
                guard !state.shuttingDown else { return }
                for id in batch {
                    guard let subscriber = state.subscribers[id], !subscriber.isCut, !state.suspended.contains(id),
                        subscriber.lastWriteRound <= round - 2,
                        subscriber.bufferedBytes > settings.streamBufferLimit,
                        subscriber.connection is any ClosableStreamConnection
                    else { continue }
                    cut(subscriber, in: &state)
                    state.metrics.bufferLimitCuts += 1
                }
            }
        }
        // Each under its own limit, together still over the budget: the fattest go first.
        state.withLock { state in
            guard !state.shuttingDown else { return }
            _ = makeRoom(in: &state)
        }
    }

    /// How many streams one heartbeat batch sends to while holding the lock (about 10 µs each).
    private static let heartbeatBatch = 64

    /// The comment every heartbeat sends, shared by all streams.
    private static let heartbeatFrame = EventFrame(sequence: 0, model: nil, isCommit: false, bytes: EventEncoder.heartbeat)
}
