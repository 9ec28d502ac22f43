import LiveBindEngine
extension EventHub {
    /// The snapshot frame another stream started from with the same content, if it is still a good
    /// start (see `SharedSnapshots`) and not before `notBefore`. Called with the lock held.
    func sharedSnapshot(for key: SnapshotKey, notBefore: UInt64 = 0, in state: inout State) -> EventFrame? {
        guard
            let frame = state.snapshots.frame(
                for: key, droppedThrough: state.log.droppedThrough,
                publishedBytes: state.log.publishedBytes, notBefore: notBefore)
        else { return nil }
        state.metrics.snapshotsShared += 1
        return frame
    }

    /// What a snapshot for `models` would hold now: the key to look a shared one up by. Takes the
    /// store's lock (a name lookup per named model), not the hub's.
    func snapshotKey(for models: ModelFilter) -> SnapshotKey {
        guard let names = models.names else { return SnapshotKey(filter: models, included: []) }
        let existing = store.visibleSnapshot(models: Array(names)).models.map(\.name).filter(models.wants)
        return SnapshotKey(filter: models, included: existing)
    }

    /// What a fresh snapshot of the models a filter lets through shows: one consistent cut.
    struct SnapshotCut: Sendable {
        let sequence: UInt64
        let models: ModelFilter
        let wanted: [ModelSnapshot]

        /// An upper bound of the bytes its frame takes (the values' `countedSize`, and room for each
        /// event's name, id, model and revision): what is charged to the budget before it is encoded.
        /// Walks the values: call it without the hub's lock.
        var bytes: Int {
            wanted.reduce(0) { $0 + $1.value.countedSize + 128 + 2 * $1.name.utf8.count }
        }
    }

    /// The cut a fresh snapshot for `models` is made from. Takes the store's lock, not the hub's;
    /// the values are shared with the store (copy-on-write), nothing is copied.
    func snapshotCut(models: ModelFilter) -> SnapshotCut {
        let cut = store.visibleSnapshot(models: models.names.map { Array($0) })
        return SnapshotCut(sequence: cut.sequence, models: models, wanted: cut.models.filter { models.wants($0.name) })
    }

    /// `cut` as one frame: a `snapshot` event per model, all with the cut's id (the frame's
    /// `sequence`), and the key of what it holds.
    func encodeSnapshot(_ cut: SnapshotCut) -> (frame: EventFrame, key: SnapshotKey) {
        let models = cut.models
        var bytes: [UInt8] = []
        let wanted = cut.wanted
        var idLineAt = 0
        for (index, model) in wanted.enumerated() {
            // One cut, one id: on its last event, so a client that drops inside the cut resumes before it.
            let last = index == wanted.count - 1
            if last { idLineAt = bytes.count }
            EventEncoder.appendSnapshot(model, sequence: cut.sequence, id: last, into: &bytes)
        }
        let frame = EventFrame(sequence: cut.sequence, model: nil, isCommit: false, bytes: bytes, idLineAt: idLineAt)
        return (frame, SnapshotKey(filter: models, included: wanted.map(\.name)))
    }

    /// The frame to start from once `fresh` is encoded: one another stream shared meanwhile (so only
    /// one stays in memory), else `fresh`, now shared with the streams that follow. Called with the lock held.
    func adopt(_ fresh: (frame: EventFrame, key: SnapshotKey), notBefore: UInt64 = 0, in state: inout State) -> EventFrame {
        state.metrics.snapshotsEncoded += 1
        if let shared = sharedSnapshot(for: fresh.key, notBefore: notBefore, in: &state) { return shared }
        state.snapshots.share(fresh.frame, for: fresh.key, publishedBytes: state.log.publishedBytes)
        return fresh.frame
    }

    /// Points `subscriber` at the cut `snapshot` was taken at: its preface gets the snapshot (after
    /// whatever it holds), and only log frames after the cut are sent. Called with the lock held.
    ///
    /// A commit can reach the log after a snapshot that already includes it: `lastSequence` makes the
    /// reader skip it, so no change is delivered twice.
    func start(_ subscriber: Subscriber, at snapshot: EventFrame, in state: inout State) {
        if !snapshot.bytes.isEmpty {
            subscriber.preface.append(snapshot)
            state.budget.add(snapshot.bytes.count)
        }
        subscriber.lastSequence = snapshot.sequence
        subscriber.position = state.log.firstPosition(after: snapshot.sequence)
        if state.log.droppedThrough > snapshot.sequence { subscriber.pendingResync = .lagging }
    }

    /// The `resync` event for `reason`, one frame per reason for every stream.
    static func resyncFrame(_ reason: ResyncReason) -> EventFrame {
        switch reason {
        case .gap: resyncGap
        case .restart: resyncRestart
        case .lagging: resyncLagging
        }
    }

    private static let resyncGap = makeResyncFrame(.gap)
    private static let resyncRestart = makeResyncFrame(.restart)
    private static let resyncLagging = makeResyncFrame(.lagging)

    private static func makeResyncFrame(_ reason: ResyncReason) -> EventFrame {
        EventFrame(sequence: 0, model: nil, isCommit: false, bytes: EventEncoder.resync(reason))
    }
}
