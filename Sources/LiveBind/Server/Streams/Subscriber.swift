import DequeModule
internal import LiveBindHTTP

/// One stream of an event hub: its place in the log, the frames it holds unsent (its preface, its own
/// frames, a frame sent in part), its locations and its connection.
///
/// Part of `EventHub.State` (`subscribers`): read and changed only with the hub's lock held. A class,
/// so the reader and `publish` change it in place instead of copying it out of the dictionary and
/// back (each copy retains its filter, preface and partial frame).
///
/// Invariants: `derived` is in sequence order (frames of one sequence in the order queued), and
/// `derivedBytes` and `derivedSnapshotBytes` are the bytes of its frames and of its location snapshots
/// (frames of no model): they change together, only through `queue`, `removeFirstDerived` and
/// `clearDerived`. `position` is absolute (see `EventLog`). The ids sent on `id:` lines strictly
/// increase (`takesID`).
final class Subscriber {
    let models: ModelFilter
    /// Absolute log position of the next frame to look at.
    var position: Int
    /// Commit frames with a sequence at or below this were sent (or are covered by a snapshot).
    var lastSequence: UInt64
    /// Private frames (retry line, snapshots, resync, heartbeat) sent before any log frame.
    var preface: [EventFrame]
    /// A frame sent only in part.
    var partial: Partial?
    /// The newest id the stream sent on an `id:` line (or resumed from); later frames with no newer
    /// id go without one (see `takesID`).
    var lastSentID: UInt64
    var pendingResync: ResyncReason?
    /// Set when the stream was cut for holding too much unsent: its next read ends it.
    var isCut = false
    /// The heartbeat round in which the stream last wrote anything.
    var lastWriteRound: Int
    var connection: (any HTTPStreamConnection)?
    /// The same connection, when it can send a heartbeat without being woken.
    var directWriter: (any SuspendedStreamWriting)?
    /// The heartbeat round at which the stream, idle, was first seen with bytes its peer had not
    /// acknowledged (nil once all were acknowledged).
    var unacknowledgedSince: Int?
    /// The session the stream was opened with, so that ending the session ends the stream.
    let session: SessionTable.Key?
    /// Set when the stream's credential expired or its session ended: it sends what it has begun,
    /// then `auth_revoked`, then ends.
    var isRevoked = false
    /// The locations the stream subscribes to with `?sub=` (whole models are in `models`).
    var subscriptions: [Subscription] = []
    /// The id `PATCH /events/{id}` knows the stream by, when it has `sub` values.
    var streamID: String?
    /// Frames made for this stream alone (its locations' events), in sequence order, merged with
    /// the log's frames as they are read.
    private(set) var derived: Deque<EventFrame> = []
    private(set) var derivedBytes = 0
    /// Bytes of the location snapshots among `derived` (frames of no model): a stream is behind
    /// by the events it holds after them, not by the snapshots it starts (over) from.
    private(set) var derivedSnapshotBytes = 0
    /// Location snapshots taken and being encoded outside the lock: until they are queued, the
    /// stream sends nothing after its preface.
    var pendingSnapshots = 0
    /// Suspended while such a snapshot is encoded, wherever it was in the log: a wake must not move it.
    var isHeldBack = false

    init(
        models: ModelFilter, position: Int, lastSequence: UInt64, preface: [EventFrame], round: Int,
        session: SessionTable.Key? = nil
    ) {
        self.session = session
        self.models = models
        self.position = position
        self.lastSequence = lastSequence
        lastSentID = lastSequence
        self.preface = preface
        lastWriteRound = round
    }

    /// Moves the cursor of a stream being woken from suspension up to `position` (never back). A
    /// stream is suspended at the end of the log, and no frame appended since woke it until now,
    /// so it wants none of the frames before `position` (the frame that wakes it, or the log's end
    /// when no frame does): left behind, frames of other models leaving the log meanwhile would
    /// look like frames it missed, and it would get a needless `resync` (`lagging`).
    func wake(skippingTo position: Int) {
        guard !isHeldBack else { return }
        self.position = max(self.position, position)
    }

    /// Bytes of the frames the stream holds and has not finished sending: whole frames, as that
    /// is what stays in memory (a frame shared with other streams counts for each).
    var bufferedBytes: Int {
        preface.reduce(derivedBytes + (partial?.frame.bytes.count ?? 0)) { $0 + $1.bytes.count }
    }

    /// Takes the stream's connection on its first read (the subscriber is made before its response).
    func learn(_ connection: any HTTPStreamConnection) {
        guard self.connection == nil else { return }
        self.connection = connection
        directWriter = connection as? any SuspendedStreamWriting
    }

    /// Adds one of the stream's own frames, in sequence order (after those with the same sequence).
    func queue(_ frame: EventFrame) {
        var index = derived.endIndex
        while index > derived.startIndex, derived[index - 1].sequence > frame.sequence { index -= 1 }
        derived.insert(frame, at: index)
        derivedBytes += frame.bytes.count
        if frame.model == nil { derivedSnapshotBytes += frame.bytes.count }
    }

    /// Takes the first of the stream's own frames off, as the reader sends it.
    func removeFirstDerived() {
        let frame = derived.removeFirst()
        derivedBytes -= frame.bytes.count
        if frame.model == nil { derivedSnapshotBytes -= frame.bytes.count }
    }

    /// Ends the stream: it drops every frame it holds, and its next read ends it.
    func end() {
        isCut = true
        preface = []
        partial = nil
        clearDerived()
    }

    /// Drops every own frame.
    func clearDerived() {
        derived.removeAll()
        derivedBytes = 0
        derivedSnapshotBytes = 0
    }

    /// Drops every own frame; the stream starts over with `resync` (`reason`) and fresh snapshots when
    /// it next reads.
    func dropDerived(resync reason: ResyncReason) {
        clearDerived()
        pendingResync = reason
    }

    /// Holds the stream back until the view at its location `index` is arranged and its snapshot
    /// taken; a snapshot of the location still being encoded is dropped (it shows the old rows).
    func holdForArrangement(_ index: Int) {
        subscriptions[index].snapshotGeneration += 1
        guard !subscriptions[index].awaitsArrangement else { return }
        subscriptions[index].awaitsArrangement = true
        pendingSnapshots += 1
    }

    /// A frame sent only in part: how many of its bytes went out, and whether its `id:` line is left out.
    struct Partial {
        let frame: EventFrame
        let offset: Int
        let withoutID: Bool
    }

    /// Whether `frame` goes out with its `id:` line; records the id when it does.
    ///
    /// Ids close groups: every event since the previous `id:` line belongs to the group the next one
    /// closes, so a client that drops inside a group resumes before it and gets all of it again. So a
    /// frame leaves its id out when a frame after it with the same id is known (`continued`), and when
    /// the stream already sent that id or a later one (a location's snapshot restating a point the
    /// client has reached, such as a window move's answer). The ids a stream sends strictly increase.
    func takesID(of frame: EventFrame, continued: Bool) -> Bool {
        guard frame.idLine != nil, frame.id > lastSentID, !continued else { return false }
        lastSentID = frame.id
        return true
    }
}
