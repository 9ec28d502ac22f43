import LiveBindEngine
internal import LiveBindHTTP
/// One memory budget for what every stream holds unsent (`Settings.maxUnsentBytes`).
///
/// A stream holds frames it has not finished sending: its preface (snapshots, notices), its own
/// frames (location events and snapshots) and a frame sent in part. Frames are shared between streams
/// (a snapshot of the same content, a commit's event), so the budget counts each frame once, however
/// many streams hold it. The log's frames are bounded on their own (`retainedBytes`).
///
/// New streams are admitted only while the total is under the budget; past it, the fattest streams
/// whose clients read nothing are cut first, and a new stream that still finds it spent is refused
/// with 503. The heartbeat cuts such streams too while the total is over the budget.
///
/// Counting walks every stream's frames, so it is not done for each new stream: the last count plus
/// the bytes of every frame given to a stream since (`State.unsentAdded`, a shared frame counted for
/// each) bounds the total from above, and only when that bound reaches the budget is it counted again.
extension EventHub {
    /// Bytes of the distinct frames every stream holds unsent. Called with the lock held.
    func unsentBytes(in state: State) -> Int {
        var seen = Set<ObjectIdentifier>()
        var total = 0
        func count(_ frame: EventFrame) {
            if seen.insert(ObjectIdentifier(frame)).inserted { total += frame.bytes.count }
        }
        for subscriber in state.subscribers.values {
            if let partial = subscriber.partial { count(partial.frame) }
            for frame in subscriber.preface { count(frame) }
            for frame in subscriber.derived { count(frame) }
        }
        return total
    }

    /// Whether streams may be given more frames of their own, on top of `extra` bytes about to be
    /// given and of the frames being made (`State.reservedBytes`): the estimate is under the budget, or
    /// a count finds it so. Called with the lock held.
    func hasRoom(in state: inout State, adding extra: Int = 0) -> Bool {
        let extra = extra + state.reservedBytes
        guard state.unsentCounted + state.unsentAdded + extra >= settings.maxUnsentBytes else { return true }
        let total = unsentBytes(in: state)
        (state.unsentCounted, state.unsentAdded) = (total, 0)
        return total + extra < settings.maxUnsentBytes
    }

    /// Cuts the fattest streams whose clients read nothing (not suspended, and nothing written since
    /// the heartbeat tick before the last) until the total, with `extra` bytes about to be made and
    /// those being made, is under the budget; true when it is. Called with the lock held.
    func makeRoom(in state: inout State, adding extra: Int = 0) -> Bool {
        if hasRoom(in: &state, adding: extra) { return true }
        let extra = extra + state.reservedBytes
        var total = state.unsentCounted  // just counted by `hasRoom`
        defer { state.unsentCounted = total }
        let quietSince = state.heartbeatRound - 2
        let stalled = state.subscribers.filter { id, subscriber in
            !subscriber.isCut && !state.suspended.contains(id) && subscriber.lastWriteRound <= quietSince
                && subscriber.connection is any ClosableStreamConnection
        }.sorted { $0.value.bufferedBytes > $1.value.bufferedBytes }
        for (_, subscriber) in stalled {
            cut(subscriber, in: &state)
            state.metrics.budgetCuts += 1
            total = unsentBytes(in: state)
            if total + extra < settings.maxUnsentBytes { return true }
        }
        return false
    }

    /// Ends a stream whose client reads nothing: its frames are released at once, and its socket is shut
    /// so that libmicrohttpd ends the response (the stream's next read ends it too). Called with the lock held.
    func cut(_ subscriber: Subscriber, in state: inout State) {
        guard let connection = subscriber.connection as? any ClosableStreamConnection else { return }
        subscriber.end()
        // The subscriber is still registered, so its response and socket are still there.
        connection.close()
    }
}
