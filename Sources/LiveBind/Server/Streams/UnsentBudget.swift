/// One memory budget for what every stream holds unsent (`EventHub.Settings.maxUnsentBytes`).
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
/// Counting walks every stream's frames (`EventHub.unsentBytes(in:)`), so it is not done for each new
/// stream: the last count (`counted`) plus the bytes of every frame given to a stream since (`added`,
/// a shared frame counted for each) bounds the total from above, and only when that bound reaches the
/// budget is it counted again (`EventHub.hasRoom`, `makeRoom`).
///
/// Frames are charged to the budget before they are made. A snapshot (a model's, a location's, a
/// window's or a view's) is measured first, from the values it will show (`JSON.countedSize`: the
/// compact text and a byte per member, so at least the bytes of the encoded value), and those bytes
/// are reserved (`reserved`) before it is encoded. Every check of the budget counts the reservations,
/// so requests making snapshots at once cannot pass it together; once the frame is queued it counts
/// as any unsent frame and the reservation ends. A request whose snapshots alone would reach the
/// budget can never be served: it is refused with 413 naming `--max-unsent-bytes`. One that would
/// pass it only with what other streams hold first cuts streams whose clients read nothing
/// (`makeRoom`), then is refused with 503 (`Retry-After`) (see `EventHub.reserve`).
///
/// Part of `EventHub.State`: read and changed only with the hub's lock held.
///
/// Invariants: `counted + added` bounds what streams hold from above, but for the small notices that
/// are not added (the `retry:`, `stream`, `resync`, heartbeat and `auth_revoked` frames): every
/// snapshot and event frame given to a stream is added, and frames only leave streams. `added` is 0
/// right after a count. `reserved` is the sum of the reservations not yet released.
struct UnsentBudget {
    /// Most bytes of distinct frames all streams together may hold unsent.
    let limit: Int
    /// What streams held unsent at the last count (`EventHub.unsentBytes`), and the bytes of frames
    /// given to streams since: together an upper bound of what they hold.
    private(set) var counted = 0
    private(set) var added = 0
    /// Bytes of frames being made for streams (snapshots being encoded, replays not yet sent),
    /// charged to the budget before they exist (see `EventHub.reserve`).
    private(set) var reserved = 0

    /// Whether the estimate, with the reservations and `extra` bytes more, is under the limit. Right
    /// after `recount`, the estimate is the count.
    func hasRoom(adding extra: Int = 0) -> Bool {
        counted + added + extra + reserved < limit
    }

    /// Starts the estimate again from `total`, the bytes streams hold now.
    mutating func recount(_ total: Int) {
        (counted, added) = (total, 0)
    }

    /// Counts `bytes` of a frame given to a stream.
    mutating func add(_ bytes: Int) {
        added += bytes
    }

    /// Charges `bytes` of frames about to be made; `release` gives them back.
    mutating func reserve(_ bytes: Int) {
        reserved += bytes
    }

    mutating func release(_ bytes: Int) {
        reserved -= bytes
    }
}
