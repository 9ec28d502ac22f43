import Foundation

// Snapshots of every model in the stream `<stream>_SNAPSHOTS`: loaded at start, taken between turns.
extension ClusterNode {
    /// The models as the last snapshot has them, and its sequence (none: empty at 0). Throws when the
    /// stream no longer holds every commit after it. Call before ``start()``: the node follows the
    /// stream from the snapshot's sequence on.
    func loadSnapshot() throws(ClusterError) -> ClusterSnapshot {
        var snapshot = ClusterSnapshot(sequence: 0, models: [])
        // A stream made a moment ago may still be electing its leader: reads time out until then.
        let deadline = ContinuousClock.now + configuration.startTimeout
        if configuration.snapshotInterval > 0,
           let message = try Self.retrying(until: deadline, { () throws(ClusterError) -> StreamMessage? in
               try nats.lastMessage(configuration.snapshotStream, subject: snapshotSubject, headers: [])
           }) {
            snapshot = try ClusterSnapshot(body: message.body)
        }
        let bounds = try Self.retrying(until: deadline) { () throws(ClusterError) -> (first: UInt64, last: UInt64) in
            try nats.streamBounds(configuration.stream)
        }
        if bounds.last > snapshot.sequence && bounds.first > snapshot.sequence + 1 {
            throw .diverged("the stream keeps commits from \(bounds.first) on, but the last snapshot is at "
                + "\(snapshot.sequence): raise --cluster-max-commits or lower --cluster-snapshot-interval")
        }
        applied.store(snapshot.sequence, ordering: .relaxed)
        snapshotRound = snapshot.sequence / UInt64(max(1, configuration.snapshotInterval))
        httpBindings = snapshot.bindings
        return snapshot
    }

    /// Where snapshots are published.
    var snapshotSubject: String { configuration.snapshotStream + ".models" }

    /// Takes a snapshot once the applied sequence entered a new snapshot interval: the cut is taken
    /// here (between turns nothing is pending, so the visible state is the applied one; the documents
    /// are copy-on-write), the encoding and publishing on the snapshot queue. Every node does so; the
    /// stream keeps the first message of each interval (`Nats-Msg-Id` = the interval's number).
    func takeSnapshotIfDue() {
        let interval = UInt64(configuration.snapshotInterval)
        guard interval > 0, applied.load(ordering: .relaxed) / interval > snapshotRound,
              let store = turns.withLock({ store }) else { return }
        let cut = store.visibleSnapshot(models: nil)
        let round = cut.sequence / interval
        guard round > snapshotRound else { return }
        snapshotRound = round
        let bindings = httpBindings
        snapshotQueue.async { [self] in
            let body = ClusterSnapshot(sequence: cut.sequence, models: cut.models, bindings: bindings).encoded()
            let outcome = nats.publish(snapshotSubject, headers: [("Nats-Msg-Id", "\(configuration.stream)-snapshot-\(round)")],
                                       body: body, timeout: 5000)
            if case .stored = outcome {
                snapshotsTaken.add(1, ordering: .relaxed)
            } else {
                logger.warning("cluster: the snapshot at \(cut.sequence) (\(body.count) bytes) was not stored: \(outcome)")
            }
        }
    }
}
