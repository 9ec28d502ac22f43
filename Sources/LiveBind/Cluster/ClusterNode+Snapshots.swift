import Foundation

// Snapshots of every model in the stream `<stream>_SNAPSHOTS`, in chunks that each fit one NATS
// message, with a manifest naming them (`SnapshotManifest`): loaded at start, taken between turns.
extension ClusterNode {
    /// The models as the last snapshot has them, and its sequence (none: empty at 0). Throws when the
    /// stream no longer holds every commit after it. Call before ``start()``: the node follows the
    /// stream from the snapshot's sequence on.
    func loadSnapshot() throws(ClusterError) -> ClusterSnapshot {
        var snapshot = ClusterSnapshot(sequence: 0, models: [])
        // A stream made a moment ago may still be electing its leader: reads time out until then. A
        // chunk purged while it is read (two newer snapshots were taken meanwhile) is read again from
        // the newest manifest.
        let deadline = ContinuousClock.now + configuration.startTimeout
        if configuration.snapshotInterval > 0,
           let body = try Self.retrying(until: deadline, { () throws(ClusterError) -> [UInt8]? in try lastSnapshotBody() }) {
            snapshot = try ClusterSnapshot(body: body)
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

    /// Where snapshot manifests are published, and their chunks.
    var manifestSubject: String { configuration.snapshotStream + ".manifest" }
    var chunkSubject: String { configuration.snapshotStream + ".chunks" }
    /// Where version 0.1.0 published each snapshot whole, in one message.
    var wholeSnapshotSubject: String { configuration.snapshotStream + ".models" }

    /// The last manifest, nil when there is none.
    func lastManifest() throws(ClusterError) -> SnapshotManifest? {
        try nats.lastMessage(configuration.snapshotStream, subject: manifestSubject, headers: []).map {
            (message) throws(ClusterError) in try SnapshotManifest(body: message.body)
        }
    }

    /// The newest snapshot's bytes, its chunks joined (or a whole one of 0.1.0); nil when there is none.
    func lastSnapshotBody() throws(ClusterError) -> [UInt8]? {
        guard let manifest = try lastManifest() else {
            return try nats.lastMessage(configuration.snapshotStream, subject: wholeSnapshotSubject, headers: [])?.body
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(manifest.bytes)
        for sequence in manifest.chunks {
            guard let chunk = try nats.message(configuration.snapshotStream, sequence: sequence) else {
                throw .unavailable("chunk \(sequence) of the snapshot at \(manifest.sequence) is gone")
            }
            bytes += chunk.body
        }
        guard bytes.count == manifest.bytes else {
            throw .diverged("the snapshot at \(manifest.sequence) has \(bytes.count) bytes, its manifest says \(manifest.bytes)")
        }
        return bytes
    }

    /// Takes a snapshot once the applied sequence entered a new snapshot interval: the cut is taken
    /// here (between turns nothing is pending, so the visible state is the applied one; the documents
    /// are copy-on-write), the encoding and publishing on the snapshot queue.
    ///
    /// Every node may take one: a node that finds a manifest of this interval already stored stops
    /// (before and between chunks), and the stream keeps the first manifest of each interval
    /// (`Nats-Msg-Id` = the interval's number). Once its manifest is stored, the chunks of snapshots
    /// older than the one before it are purged.
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
            do throws(ClusterError) {
                if try publishSnapshot(body, sequence: cut.sequence, round: round) {
                    snapshotsTaken.add(1, ordering: .relaxed)
                }
            } catch {
                logger.warning("cluster: the snapshot at \(cut.sequence) (\(body.count) bytes) was not stored: \(error)")
            }
        }
    }

    /// Publishes `body` in chunks, then its manifest; returns whether this node's manifest is the one
    /// stored for `round` (false: another node's came first).
    private func publishSnapshot(_ body: [UInt8], sequence: UInt64, round: UInt64) throws(ClusterError) -> Bool {
        let stream = configuration.snapshotStream
        func alreadyTaken() throws(ClusterError) -> Bool { (try lastManifest()?.round ?? 0) >= round }
        let previous = try lastManifest()
        if let previous, previous.round >= round { return false }
        // Room for the chunk's headers within the server's limit.
        let chunkSize = max(1024, nats.maxPayload - 512)
        var chunks: [UInt64] = []
        var start = 0
        repeat {
            if !chunks.isEmpty, chunks.count % 16 == 0, try alreadyTaken() { return false }
            let end = min(start + chunkSize, body.count)
            let id = "\(configuration.stream)-snapshot-\(round)-\(configuration.nodeName)-\(bootID)-\(chunks.count)"
            chunks.append(try storeSnapshotMessage(chunkSubject, id: id, body: Array(body[start..<end])).sequence)
            start = end
        } while start < body.count
        let manifest = SnapshotManifest(sequence: sequence, round: round, bytes: body.count, chunks: chunks)
        let stored = try storeSnapshotMessage(manifestSubject, id: "\(configuration.stream)-snapshot-\(round)",
                                              body: manifest.encoded())
        guard !stored.duplicate else { return false }
        // Keeps the previous snapshot's chunks (a node may be reading them) and everything after them.
        if let first = previous?.chunks.first {
            try nats.purge(stream, subject: chunkSubject, before: first)
        }
        return true
    }

    /// Stores one message of the snapshot stream, retrying with the same id while the stream does
    /// not answer (for up to 10 s).
    private func storeSnapshotMessage(_ subject: String, id: String, body: [UInt8])
        throws(ClusterError) -> (sequence: UInt64, duplicate: Bool) {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            switch nats.publish(subject, headers: [("Nats-Msg-Id", id)], body: body, timeout: 5000) {
            case .stored(let sequence, let duplicate): return (sequence, duplicate)
            case .refused(let reason): throw .unavailable(reason)
            case .wrongLastSequence: throw .unavailable("the snapshot stream refused \(subject)")
            case .unavailable(let reason):
                if ContinuousClock.now >= deadline { throw .unavailable(reason) }
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
    }

    /// The stream's commits among its last `limit` sequences up to the applied one, oldest first, for
    /// the event hub's history (a client resuming with an id from before this node started gets the
    /// events it missed); empty when they cannot be read within a few seconds.
    func recentCommits(limit: Int) -> (commits: [Commit], through: UInt64) {
        let through = applied.load(ordering: .acquiring)
        guard through > 0, limit > 0, let bounds = try? nats.streamBounds(configuration.stream) else { return ([], through) }
        let from = max(bounds.first, through >= UInt64(limit) ? through - UInt64(limit) + 1 : 1)
        guard from <= through,
              let subscription = try? NATSSubscription(nats, stream: configuration.stream, subject: subject, startSequence: from)
        else { return ([], through) }
        let deadline = ContinuousClock.now + .seconds(5)
        var commits: [Commit] = []
        let names = [Commit.modelHeader, Commit.revisionHeader]
        while ContinuousClock.now < deadline, let message = subscription.next(timeout: 1000, headers: names),
              message.sequence <= through {
            guard let commit = try? Commit(message: message) else { return ([], through) }
            commits.append(commit)
            if message.sequence == through || message.pending == 0 { break }
        }
        return (commits, through)
    }
}
