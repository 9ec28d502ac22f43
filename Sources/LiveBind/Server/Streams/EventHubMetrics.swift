/// Counters of an event hub, as `/metrics` reports them.
///
/// Part of `EventHub.State`: read and changed only with the hub's lock held (`EventHub.metrics` hands
/// out a copy, with the gauges filled in).
struct EventHubMetrics: Sendable {
    var openStreams = 0
    var retainedEvents = 0
    var retainedBytes = 0
    var eventsPublished = 0
    var bytesSent = 0
    var streamsOpened = 0
    var resyncs = 0
    var laggingClients = 0
    var rejectedStreams = 0
    var heartbeats = 0
    /// Snapshot frames encoded for streams starting (or starting over).
    var snapshotsEncoded = 0
    /// Streams that started (or started over) from a snapshot frame another stream had already made.
    var snapshotsShared = 0
    /// Streams cut because they held more than the buffer limit unsent while their client read nothing.
    var bufferLimitCuts = 0
    /// Quiet streams cut because their peer acknowledged nothing for a heartbeat interval.
    var silentPeerCuts = 0
    /// Streams whose clients read nothing cut to keep all streams' unsent frames under the budget.
    var budgetCuts = 0
    /// Bytes of the distinct frames the open streams hold unsent.
    var unsentBytes = 0
    /// Heartbeats sent straight to the socket of a suspended stream, without waking it.
    var directHeartbeats = 0
    /// Streams ended with `auth_revoked` (their credential expired or their session ended).
    var authRevoked = 0
    /// Open streams with `sub` values.
    var locationStreams = 0
    /// Models mirrored for location streams.
    var mirroredModels = 0
    /// Elements views arranged (a view's array arranged whole, when it opens or its array is replaced),
    /// and those of them arranged while holding the hub's lock: at most `SharedView.arrangedUnderLock`
    /// per array, plus one per change a view caught up with.
    var viewRowsArranged = 0
    var viewRowsArrangedUnderLock = 0

    /// Counts elements arranged with the hub's lock held.
    mutating func countArranged(underLock rows: Int) {
        viewRowsArranged += rows
        viewRowsArrangedUnderLock += rows
    }
}
