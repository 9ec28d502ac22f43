/// The snapshot frames streams start from, one per model filter, so that streams connecting at the
/// same cut share one encoded frame instead of each holding a copy until it is sent.
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

    private var entries: [ModelFilter: Entry] = [:]
    /// Dead entries are swept when the table reaches this size, so it never outgrows the live frames.
    private var sweepAt = 64

    /// A frame for streams with `filter`, if one is alive and still a good start: every event after
    /// its cut is in the log (`droppedThrough`) and fewer bytes than it were published since.
    func frame(for filter: ModelFilter, droppedThrough: UInt64, publishedBytes: Int) -> EventFrame? {
        guard let entry = entries[filter], let frame = entry.frame, frame.sequence >= droppedThrough,
              publishedBytes - entry.publishedBytes <= frame.bytes.count else { return nil }
        return frame
    }

    /// Offers `frame` to the next streams with `filter`.
    mutating func share(_ frame: EventFrame, for filter: ModelFilter, publishedBytes: Int) {
        entries[filter] = Entry(frame: frame, publishedBytes: publishedBytes)
        if entries.count >= sweepAt {
            entries = entries.filter { $0.value.frame != nil }
            sweepAt = max(64, 2 * entries.count)
        }
    }
}
