import LiveBindEngine
/// The snapshot frames streams start from, one per content (`SnapshotKey`), so that streams
/// connecting at the same cut share one encoded frame instead of each holding a copy until it is sent.
///
/// Frames are held weakly: a frame lives exactly as long as some stream still has to send it. A frame is
/// handed out again while every event after its cut is still in the hub's log (the stream then gets
/// those events after it, each once) and while the events published since it was made come to no more
/// bytes than the frame itself: past that, a fresh snapshot is cheaper for the client than the replay.
/// Guarded by the hub's lock.
struct SharedSnapshots {
    private struct Entry {
        weak var frame: EventFrame?
        /// The hub's count of bytes ever published when the frame was made.
        let publishedBytes: Int
    }

    private var entries: [SnapshotKey: Entry] = [:]
    /// Dead entries are swept when the table reaches this size, so it never outgrows the live frames.
    private var sweepAt = 64

    /// A frame with the content `key`, if one is alive and still a good start: every event after its
    /// cut is in the log (`droppedThrough`), fewer bytes than it were published since, and its cut is
    /// at or after `notBefore` (a stream must not go back before an id it has sent).
    func frame(for key: SnapshotKey, droppedThrough: UInt64, publishedBytes: Int, notBefore: UInt64 = 0) -> EventFrame? {
        guard let entry = entries[key], let frame = entry.frame, frame.sequence >= droppedThrough, frame.sequence >= notBefore,
            publishedBytes - entry.publishedBytes <= frame.bytes.count
        else { return nil }
        return frame
    }

    /// Offers `frame`, whose content is `key`, to the next streams that want that content.
    mutating func share(_ frame: EventFrame, for key: SnapshotKey, publishedBytes: Int) {
        entries[key] = Entry(frame: frame, publishedBytes: publishedBytes)
        if entries.count >= sweepAt {
            entries = entries.filter { $0.value.frame != nil }
            sweepAt = max(64, 2 * entries.count)
        }
    }
}

/// What a snapshot frame holds, so that streams whose queries differ but whose snapshots do not share
/// one frame: the models a query names that exist and its credential reaches (unknown names add
/// nothing), or, for a stream of every model, the credential's prefixes.
struct SnapshotKey: Hashable, Sendable {
    /// The models in the frame, sorted; nil: every model the prefixes reach.
    var models: [String]?
    /// The prefixes, when `models` is nil.
    var prefixes: [String]?

    /// The key of a frame of `included` (the models actually encoded) for a stream with `filter`.
    init(filter: ModelFilter, included: [String]) {
        if filter.names == nil {
            models = nil
            prefixes = filter.prefixes
        } else {
            models = included.sorted()
            prefixes = nil
        }
    }
}

/// The `snapshot` frames of locations and windows (`?sub=`, window moves), one per location, rows and
/// id, so that streams snapshotting the same rows at the same point share one encoded frame. Held
/// weakly, as `SharedSnapshots`: a frame lives as long as some stream still has to send it. Guarded by
/// the hub's lock.
struct LocationSnapshots {
    /// What one location snapshot holds.
    struct Key: Hashable {
        var model: String
        var path: Path
        /// The id (the commit the mirror was at).
        var sequence: UInt64
        /// A window's rows; nil for a plain location.
        var rows: Range<Int>?
        /// A window's position, as the event reports it.
        var window: Window.Position?
        /// A view's parameters (its rows are its own).
        var view: String? = nil
    }

    private struct Entry {
        weak var frame: EventFrame?
    }

    private var entries: [Key: Entry] = [:]
    private var sweepAt = 64

    /// The live frame for `key`, if any.
    func frame(for key: Key) -> EventFrame? { entries[key]?.frame }

    /// Offers `frame` to the next streams that snapshot `key`.
    mutating func share(_ frame: EventFrame, for key: Key) {
        entries[key] = Entry(frame: frame)
        if entries.count >= sweepAt {
            entries = entries.filter { $0.value.frame != nil }
            sweepAt = max(64, 2 * entries.count)
        }
    }
}
