import DequeModule
import LiveBindEngine

extension EventHub {
    /// Puts commits made before this hub existed in front of its log, so clients resume across a
    /// restart with `Last-Event-ID`: `history` is every commit of the sequences it spans, oldest
    /// first, through `through` (sequences that are no commit — a cluster's binding changes — have
    /// none; nil: through its last), read after the hub's feed was registered: the data directory's
    /// event log, or a cluster stream's last commits.
    ///
    /// Frames the feed already published are kept and not duplicated; the history is used only when it
    /// joins them without a gap. Call before any stream subscribes.
    func seed(history: [EventFrame], through: UInt64? = nil) {
        state.withLock { state in
            precondition(state.subscribers.isEmpty, "seed the event log before streams subscribe")
            let firstLive = state.log.first { $0.isCommit }?.sequence
            var merged = Deque(history.filter { $0.isCommit && $0.sequence < (firstLive ?? .max) })
            guard let last = merged.last else { return }
            let covered = max(last.sequence, through ?? 0)
            if let firstLive {
                guard covered + 1 >= firstLive else { return }
            } else {
                guard covered >= state.newestSequence else { return }
            }
            merged.append(contentsOf: state.log)
            let seededBytes = merged.reduce(0) { $0 + $1.bytes.count } - state.logBytes
            state.log = merged
            state.logBytes += seededBytes
            state.publishedBytes += seededBytes
            state.droppedThrough = merged.first!.sequence - 1
            trimLog(&state)
            state.runStart = nil
            state.newestSequence = max(state.newestSequence, merged.last { $0.isCommit }?.sequence ?? 0)
        }
    }
}
