extension EventHub {
    /// The snapshot frame another stream with `models` started from, if it is still a good start
    /// (see `SharedSnapshots`). Called with the lock held.
    func sharedSnapshot(for models: ModelFilter, in state: inout State) -> EventFrame? {
        guard let frame = state.snapshots.frame(for: models, droppedThrough: state.droppedThrough,
                                                publishedBytes: state.publishedBytes) else { return nil }
        state.metrics.snapshotsShared += 1
        return frame
    }

    /// One consistent cut of the models `models` lets through, as one frame: a `snapshot` event per
    /// model, all with the cut's id (the frame's `sequence`). Takes the store's lock, not the hub's.
    func encodeSnapshot(models: ModelFilter) -> EventFrame {
        let cut = store.visibleSnapshot(models: models.names.map { Array($0) })
        var bytes: [UInt8] = []
        for model in cut.models where models.wants(model.name) {
            EventEncoder.appendSnapshot(model, sequence: cut.sequence, into: &bytes)
        }
        return EventFrame(sequence: cut.sequence, model: nil, isCommit: false, bytes: bytes)
    }

    /// The frame to start from once `fresh` is encoded: one another stream shared meanwhile (so only
    /// one stays in memory), else `fresh`, now shared with the streams that follow. Called with the lock held.
    func adopt(_ fresh: EventFrame, for models: ModelFilter, in state: inout State) -> EventFrame {
        state.metrics.snapshotsEncoded += 1
        if let shared = sharedSnapshot(for: models, in: &state) { return shared }
        state.snapshots.share(fresh, for: models, publishedBytes: state.publishedBytes)
        return fresh
    }

    /// Points `subscriber` at the cut `snapshot` was taken at: its preface gets the snapshot (after
    /// whatever it holds), and only log frames after the cut are sent. Called with the lock held.
    ///
    /// A commit can reach the log after a snapshot that already includes it: `lastSequence` makes the
    /// reader skip it, so no change is delivered twice.
    func start(_ subscriber: Subscriber, at snapshot: EventFrame, in state: inout State) {
        if !snapshot.bytes.isEmpty { subscriber.preface.append(snapshot) }
        subscriber.lastSequence = snapshot.sequence
        subscriber.position = state.firstPosition(after: snapshot.sequence)
        if state.droppedThrough > snapshot.sequence { subscriber.pendingResync = .lagging }
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
