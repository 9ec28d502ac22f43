import LiveBindEngine
/// The commits a model's mirror takes while views are arranged from it outside the hub's lock (see
/// `EventHub.arrangeViews`), for those views to catch up with. Guarded by the hub's lock.
///
/// Bounded: past `limit` commits or `byteLimit` bytes of their events it starts again empty, and the
/// views begun before that are arranged again under the lock. It keeps only what the oldest view
/// still being arranged needs, so overlapping arrangements never leave it overflowed for good.
struct ViewJournal {
    /// The sequences the views being arranged started from.
    private var starts: [UInt64] = []
    /// Every commit the mirror took after `since`, in order, with its event's bytes.
    private var entries: [(commit: Commit, bytes: Int)] = []
    private var since: UInt64 = 0
    private var bytes = 0
    static let limit = 4096
    static let byteLimit = 16 << 20

    /// Whether views are being arranged from the mirror (which must stay meanwhile).
    var isActive: Bool { !starts.isEmpty }

    /// A view starts being arranged from the mirror at `sequence`.
    mutating func start(at sequence: UInt64) {
        if starts.isEmpty { restart(at: sequence) }
        starts.append(sequence)
    }

    /// The view that started at `sequence` no longer needs the journal.
    mutating func finish(from sequence: UInt64) {
        if let index = starts.firstIndex(of: sequence) { starts.remove(at: index) }
        guard let oldest = starts.min() else { return restart(at: 0) }
        let stale = entries.prefix { $0.commit.sequence <= oldest }
        bytes -= stale.reduce(0) { $0 + $1.bytes }
        entries.removeFirst(stale.count)
        since = max(since, oldest)
    }

    /// Keeps `commit` (whose event is `bytes` long) while views are being arranged.
    mutating func record(_ commit: Commit, bytes count: Int) {
        guard isActive else { return }
        entries.append((commit, count))
        bytes += count
        if entries.count > Self.limit || bytes > Self.byteLimit { restart(at: commit.sequence) }
    }

    /// Forgets every commit up to `sequence` (the mirror was made again from the store there).
    mutating func restart(at sequence: UInt64) {
        (entries, bytes, since) = ([], 0, sequence)
    }

    /// The commits after `sequence`, or nil when the journal no longer has them all.
    func commits(after sequence: UInt64) -> [Commit]? {
        guard sequence >= since else { return nil }
        return entries.filter { $0.commit.sequence > sequence }.map(\.commit)
    }
}
