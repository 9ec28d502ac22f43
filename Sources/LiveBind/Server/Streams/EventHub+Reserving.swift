import LiveBindEngine
internal import LiveBindHTTP
/// Frames are charged to the unsent-bytes budget before they are made.
///
/// A snapshot (a model's, a location's, a window's or a view's) is measured first, from the values it
/// will show (`JSON.countedSize`: the compact text and a byte per member, so at least the bytes of the
/// encoded value), and those bytes are reserved (`State.reservedBytes`) before it is encoded. Every
/// check of the budget counts the reservations, so requests making snapshots at once cannot pass it
/// together; once the frame is queued it counts as any unsent frame and the reservation ends.
///
/// A request whose snapshots alone would reach the budget can never be served: it is refused with 413
/// naming `--max-unsent-bytes`. One that would pass it only with what other streams hold first cuts
/// streams whose clients read nothing (`makeRoom`), then is refused with 503 (`Retry-After`).
extension EventHub {
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
    /// lock held; `release` gives the bytes back once the frames are queued (or not made).
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
        state.reservedBytes += bytes
    }

    /// Gives back bytes `reserve` charged. Called with the lock held.
    func release(_ bytes: Int, in state: inout State) {
        state.reservedBytes -= bytes
    }

    /// ``reserve(_:in:)`` taking the lock.
    func reserve(_ bytes: Int) throws(RequestError) {
        try state.withLock { (state) throws(RequestError) in try reserve(bytes, in: &state) }
    }

    /// ``release(_:in:)`` taking the lock.
    func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        state.withLock { state in release(bytes, in: &state) }
    }
}
