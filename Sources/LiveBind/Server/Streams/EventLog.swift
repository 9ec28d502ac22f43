import DequeModule

/// The frames every stream reads from: each commit encoded once, in sequence order, bounded in events
/// (`retainedEvents`) and in bytes (`retainedBytes`).
///
/// Part of `EventHub.State`: read and changed only with the hub's lock held.
///
/// Invariants:
/// - `bytes` is the sum of the bytes of `frames`.
/// - Positions are absolute: a frame keeps its position while it is in the log, `basePosition` is the
///   position of `frames.first` and `endPosition` the next frame's. A stream's cursor stays valid as
///   frames leave; one below `basePosition` fell off the log.
/// - Frames are in sequence order, and no commit is in it twice.
/// - At most `retainedEvents` frames and `retainedBytes` bytes, except that the newest frame is always
///   kept, however large.
/// - `droppedThrough` is the highest commit sequence no longer in the log (or older than the hub):
///   a stream that resumes after it finds every later commit here.
struct EventLog {
    /// Most events in the log (`EventHub.Settings.retainedEvents`).
    let retainedEvents: Int
    /// Most bytes of events in the log (`EventHub.Settings.retainedBytes`).
    let retainedBytes: Int
    private(set) var frames: Deque<EventFrame> = []
    /// Bytes of the frames in `frames`: with the snapshot frames streams share and the frames each
    /// holds unsent (cut past `streamBufferLimit` when its client stops reading), all the memory
    /// streams use, however many there are and however far behind they are.
    private(set) var bytes = 0
    /// Bytes of every frame ever appended to the log (to tell how far a shared snapshot is behind).
    private(set) var publishedBytes = 0
    /// Absolute position of `frames.first`.
    private(set) var basePosition = 0
    /// The highest commit sequence no longer in the log (or older than the hub).
    private(set) var droppedThrough: UInt64
    /// Ids below this one were never streamed by this server: a client asking to resume after one
    /// comes from before a restart. Nil once the data directory's history covers earlier runs.
    private(set) var runStart: UInt64?
    private(set) var newestSequence: UInt64

    /// An empty log of a hub started when the store was at `start`.
    init(start: UInt64, retainedEvents: Int, retainedBytes: Int) {
        self.retainedEvents = retainedEvents
        self.retainedBytes = retainedBytes
        droppedThrough = start
        runStart = start
        newestSequence = start
    }

    var endPosition: Int { basePosition + frames.count }

    /// The frame at absolute position `position` (from `basePosition` up to `endPosition`).
    subscript(position: Int) -> EventFrame { frames[position - basePosition] }

    /// The first position whose frame has a sequence above `sequence` (frames are in sequence order).
    func firstPosition(after sequence: UInt64) -> Int {
        var low = 0, high = frames.count
        while low < high {
            let middle = (low + high) / 2
            if frames[middle].sequence <= sequence { low = middle + 1 } else { high = middle }
        }
        return basePosition + low
    }

    /// Appends `frame`, then drops the oldest frames past the limits. False, and nothing changes, for
    /// a commit already in the log (seeded from the data directory's history): it is not added twice.
    mutating func append(_ frame: EventFrame) -> Bool {
        if frame.isCommit && frame.sequence <= newestSequence { return false }
        frames.append(frame)
        bytes += frame.bytes.count
        publishedBytes += frame.bytes.count
        trim()
        if frame.isCommit { newestSequence = frame.sequence }
        return true
    }

    /// Drops the oldest frames while the log holds more than `retainedEvents` events or more than
    /// `retainedBytes` bytes, always keeping the newest.
    private mutating func trim() {
        while frames.count > 1 && (frames.count > retainedEvents || bytes > retainedBytes) {
            let dropped = frames.removeFirst()
            bytes -= dropped.bytes.count
            basePosition += 1
            if dropped.isCommit { droppedThrough = max(droppedThrough, dropped.sequence) }
        }
    }

    /// Puts `history`'s commits in front of the log (see `EventHub.seed`): every commit of the
    /// sequences it spans, oldest first, through `through` (nil: through its last). Frames already in
    /// the log are kept and not duplicated; the history is used only when it joins them without a gap.
    mutating func seed(_ history: [EventFrame], through: UInt64?) {
        let firstLive = frames.first { $0.isCommit }?.sequence
        var merged = Deque(history.filter { $0.isCommit && $0.sequence < (firstLive ?? .max) })
        guard let last = merged.last else { return }
        let covered = max(last.sequence, through ?? 0)
        if let firstLive {
            guard covered + 1 >= firstLive else { return }
        } else {
            guard covered >= newestSequence else { return }
        }
        merged.append(contentsOf: frames)
        let seededBytes = merged.reduce(0) { $0 + $1.bytes.count } - bytes
        frames = merged
        bytes += seededBytes
        publishedBytes += seededBytes
        droppedThrough = merged.first!.sequence - 1
        trim()
        runStart = nil
        newestSequence = max(newestSequence, merged.last { $0.isCommit }?.sequence ?? 0)
    }
}
