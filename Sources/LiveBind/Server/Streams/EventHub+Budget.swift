import LiveBindEngine
internal import LiveBindHTTP
/// The hub's side of the unsent-bytes budget (`UnsentBudget`, `State.budget`): counting what the
/// streams hold, cutting the fattest streams whose clients read nothing, and charging frames to the
/// budget before they are made.
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
    /// given and of the frames being made (`UnsentBudget.reserved`): the estimate is under the budget,
    /// or a count finds it so. Called with the lock held.
    func hasRoom(in state: inout State, adding extra: Int = 0) -> Bool {
        if state.budget.hasRoom(adding: extra) { return true }
        state.budget.recount(unsentBytes(in: state))
        return state.budget.hasRoom(adding: extra)
    }

    /// Cuts the fattest streams whose clients read nothing (not suspended, and nothing written since
    /// the heartbeat tick before the last) until the total, with `extra` bytes about to be made and
    /// those being made, is under the budget; true when it is. Called with the lock held.
    func makeRoom(in state: inout State, adding extra: Int = 0) -> Bool {
        if hasRoom(in: &state, adding: extra) { return true }
        let quietSince = state.heartbeatRound - 2
        let stalled = state.subscribers.filter { id, subscriber in
            !subscriber.isCut && !state.suspended.contains(id) && subscriber.lastWriteRound <= quietSince
                && subscriber.connection is any ClosableStreamConnection
        }.sorted { $0.value.bufferedBytes > $1.value.bufferedBytes }
        for (_, subscriber) in stalled {
            cut(subscriber, in: &state)
            state.metrics.budgetCuts += 1
            state.budget.recount(unsentBytes(in: state))
            if state.budget.hasRoom(adding: extra) { return true }
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

    /// Bytes the frame of a location snapshot takes past its value: the event's name, ids, model,
    /// revision, path, window and view (as written), with room to spare.
    static func envelopeBytes(model: String, path: Path, view: String?) -> Int {
        256 + 2 * (model.utf8.count + path.pointer.utf8.count + (view?.utf8.count ?? 0))
    }

    /// An upper bound of the bytes `pending` encode to. Walks the values (no copy): call it without the lock.
    static func measure(_ pending: [PendingSnapshot]) -> Int {
        pending.reduce(0) { total, snapshot in
            total + snapshot.value.countedSize
                + envelopeBytes(model: snapshot.key.model, path: snapshot.key.path, view: snapshot.key.view)
        }
    }

    /// Charges `bytes` of frames about to be made to the budget, cutting streams whose clients read
    /// nothing when that makes room. Throws 413 (`snapshotsTooLarge`) when `bytes` alone reach the
    /// budget, 503 (`unsentBytesSpent`) when what the streams hold leaves too little. Called with the
    /// lock held; `UnsentBudget.release` gives the bytes back once the frames are queued (or not made).
    func reserve(_ bytes: Int, in state: inout State) throws(RequestError) {
        guard bytes > 0 else { return }
        guard bytes < settings.maxUnsentBytes else {
            state.metrics.rejectedStreams += 1
            throw .snapshotsTooLarge(bytes: bytes, limit: settings.maxUnsentBytes)
        }
        guard makeRoom(in: &state, adding: bytes) else {
            state.metrics.rejectedStreams += 1
            throw .unsentBytesSpent(limit: settings.maxUnsentBytes)
        }
        state.budget.reserve(bytes)
    }

    /// ``reserve(_:in:)`` taking the lock.
    func reserve(_ bytes: Int) throws(RequestError) {
        try state.withLock { (state) throws(RequestError) in try reserve(bytes, in: &state) }
    }

    /// Gives back bytes `reserve` charged, taking the lock.
    func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        state.withLock { state in state.budget.release(bytes) }
    }
}
