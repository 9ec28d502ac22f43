import Foundation
import LiveBindEngine

// Snapshots of every model in the stream `<stream>_SNAPSHOTS`, in chunks that each fit one NATS
// message, with an index and a manifest naming them (`SnapshotManifest`, `SnapshotIndex`): loaded at
// start, taken between turns.
extension ClusterNode {
    /// The models as the last snapshot has them, and its sequence (none: empty at 0). Call before
    /// ``start()``: the node follows the stream from the snapshot's sequence on.
    ///
    /// When the stream no longer holds every commit after the last snapshot (it keeps
    /// `--cluster-max-commits`, and writes outran the snapshots), it waits for a newer snapshot until
    /// the start timeout, then throws.
    func loadSnapshot() throws(ClusterError) -> ClusterSnapshot {
        // A stream made a moment ago may still be electing its leader: reads time out until then. A
        // chunk deleted while it is read (two newer snapshots were taken meanwhile) is read again from
        // the newest manifest.
        let deadline = ContinuousClock.now + configuration.startTimeout
        let snapshot = try Self.retrying(until: deadline) { () throws(ClusterError) -> ClusterSnapshot in
            let manifest = configuration.snapshotInterval > 0 ? try lastManifest() : nil
            let bounds = try nats.streamBounds(configuration.stream)
            func check(_ sequence: UInt64) throws(ClusterError) {
                guard bounds.last > sequence && bounds.first > sequence + 1 else { return }
                throw .unavailable(
                    "the stream keeps commits from \(bounds.first) on, but the last snapshot is at \(sequence): "
                        + "raise --cluster-max-commits (or lower --cluster-snapshot-interval) so that the stream keeps "
                        + "the commits written while a snapshot is taken")
            }
            if let manifest { try check(manifest.sequence) }
            let snapshot = configuration.snapshotInterval > 0 ? try readSnapshot(manifest) : nil
            try check(snapshot?.sequence ?? 0)
            return snapshot ?? ClusterSnapshot(sequence: 0, events: 0, models: [])
        }
        if snapshot.sequence > 0 {
            logger.info("cluster: loaded the snapshot at \(snapshot.sequence) (\(snapshot.models.count) models)")
        }
        applied.store(snapshot.sequence, ordering: .relaxed)
        snapshotRound = snapshot.sequence / UInt64(max(1, configuration.snapshotInterval))
        httpBindings = snapshot.bindings
        return snapshot
    }

    /// Where snapshot manifests are published, their chunks, and the nodes' claims on an interval.
    var manifestSubject: String { configuration.snapshotStream + ".manifest" }
    var chunkSubject: String { configuration.snapshotStream + ".chunks" }
    var claimSubject: String { configuration.snapshotStream + ".claims" }
    /// Where version 0.1.0 published each snapshot whole, in one message.
    var wholeSnapshotSubject: String { configuration.snapshotStream + ".models" }

    /// The last manifest, nil when there is none.
    func lastManifest() throws(ClusterError) -> SnapshotManifest? {
        try nats.lastMessage(configuration.snapshotStream, subject: manifestSubject, headers: []).map {
            (message) throws(ClusterError) in try SnapshotManifest(body: message.body)
        }
    }

    /// The snapshot `manifest` names (without one, a whole snapshot of 0.1.0's); nil when there is none.
    func readSnapshot(_ manifest: SnapshotManifest?) throws(ClusterError) -> ClusterSnapshot? {
        guard let manifest else {
            return try nats.lastMessage(configuration.snapshotStream, subject: wholeSnapshotSubject, headers: []).map {
                (message) throws(ClusterError) in try ClusterSnapshot(body: message.body)
            }
        }
        let index = try readIndex(manifest)
        let bodies = try fetchChunks(index.segments.flatMap(\.chunks), of: manifest)
        var models: [ModelSnapshot] = []
        for segment in index.segments {
            let bytes = try join(segment.chunks, bodies, bytes: segment.bytes, of: manifest)
            for model in segment.models {
                guard
                    let value = try? JSON(
                        parsing: Array(bytes[model.offset..<model.offset + model.length]),
                        maxDepth: StoreLimits.depthCeiling + 1), case .object = value
                else {
                    throw .diverged("model \(model.name) of the snapshot at \(manifest.sequence) cannot be read")
                }
                models.append(ModelSnapshot(name: model.name, revision: model.revision, value: value))
            }
        }
        var snapshot = ClusterSnapshot(sequence: manifest.sequence, events: manifest.events, models: models, bindings: index.bindings)
        snapshot.receipts = index.receipts
        snapshot.answers = index.answers
        return snapshot
    }

    func readIndex(_ manifest: SnapshotManifest) throws(ClusterError) -> SnapshotIndex {
        let bodies = try fetchChunks(manifest.chunks, of: manifest)
        return try SnapshotIndex(bytes: join(manifest.chunks, bodies, bytes: manifest.bytes, of: manifest))
    }

    /// The bodies of the chunk messages `sequences`, read in one pass of an ordered consumer over the
    /// chunks (a request per message is several times slower on a busy server).
    private func fetchChunks(_ sequences: [UInt64], of manifest: SnapshotManifest) throws(ClusterError) -> [UInt64: [UInt8]] {
        var wanted = Set(sequences)
        guard let first = wanted.min(), let last = wanted.max() else { return [:] }
        let subscription = try NATSSubscription(
            nats, stream: configuration.snapshotStream, subject: chunkSubject,
            startSequence: first)
        var bodies: [UInt64: [UInt8]] = [:]
        while !wanted.isEmpty {
            guard let message = subscription.next(timeout: 5000, headers: []), message.sequence <= last else { break }
            if wanted.remove(message.sequence) != nil { bodies[message.sequence] = message.body }
        }
        if let missing = wanted.min() {
            throw .unavailable("chunk \(missing) of the snapshot at \(manifest.sequence) is gone")
        }
        return bodies
    }

    /// `chunks`' bodies joined, which must come to `bytes`.
    private func join(
        _ chunks: [UInt64], _ bodies: [UInt64: [UInt8]], bytes count: Int,
        of manifest: SnapshotManifest
    ) throws(ClusterError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        for sequence in chunks { bytes += bodies[sequence] ?? [] }
        guard bytes.count == count else {
            throw .diverged("chunks of the snapshot at \(manifest.sequence) hold \(bytes.count) bytes, not \(count)")
        }
        return bytes
    }

    /// Notes that `commits` were applied, through the stream's message `sequence`: their models changed
    /// (turn thread only).
    func noteChanged(_ commits: [Commit], at sequence: UInt64) {
        for commit in commits { changedAt[commit.model] = sequence }
    }

    /// Takes a snapshot once the applied sequence entered a new snapshot interval: the cut is taken
    /// here (between turns nothing is pending, so the visible state is the applied one; the documents
    /// are copy-on-write), the encoding and publishing on the snapshot queue.
    ///
    /// Every node gets there; the first to store its claim on the interval (`Nats-Msg-Id` = the
    /// interval's number, which the stream stores once) takes the snapshot. It stores only the models
    /// that changed since the snapshot before (the others keep their segments), then the index and the
    /// manifest; then it deletes the chunks the snapshot two before used and the last two no longer do.
    /// One snapshot at a time: while one is stored, later intervals wait, and the next one is of the
    /// state then.
    func takeSnapshotIfDue() {
        let interval = UInt64(configuration.snapshotInterval)
        guard interval > 0, applied.load(ordering: .relaxed) / interval > snapshotRound,
            !snapshotting.load(ordering: .acquiring), let store = turns.withLock({ store })
        else { return }
        let visible = store.visibleSnapshot(models: nil)
        let cut = (sequence: applied.load(ordering: .relaxed), events: visible.sequence, models: visible.models)
        let round = cut.sequence / interval
        guard round > snapshotRound else { return }
        snapshotRound = round
        let names = Set(cut.models.map(\.name))
        changedAt = changedAt.filter { names.contains($0.key) }
        let changed = changedAt
        let bindings = httpBindings
        let receipts = receiptSource.withLock { $0 }?(cut.events, cut.sequence) ?? ([], [])
        snapshotting.store(true, ordering: .releasing)
        snapshotQueue.async { [self] in
            defer { snapshotting.store(false, ordering: .releasing) }
            do throws(ClusterError) {
                let claim = try storeSnapshotMessage(
                    claimSubject, id: "\(configuration.stream)-snapshot-claim-\(round)",
                    body: Array(configuration.nodeName.utf8))
                guard !claim.duplicate else { return }
                if try publishSnapshot(cut, bindings: bindings, receipts: receipts, changedAt: changed, round: round) {
                    snapshotsTaken.add(1, ordering: .relaxed)
                }
            } catch {
                logger.warning("cluster: the snapshot at \(cut.sequence) was not stored: \(error)")
            }
        }
    }

    /// Stores the snapshot of `cut`: the segments of the last snapshot whose models did not change
    /// since it (by `changedAt`, the sequence each model last changed at), new segments for the rest,
    /// the index, then the manifest. Returns false, storing no manifest, when a snapshot of this
    /// interval or a later one is already stored.
    private func publishSnapshot(
        _ cut: (sequence: UInt64, events: UInt64, models: [ModelSnapshot]),
        bindings: [(id: String, definition: JSON, enabled: Bool)],
        receipts: (commits: [CommitReceipt], answers: [JSON]),
        changedAt: [String: UInt64], round: UInt64
    ) throws(ClusterError) -> Bool {
        let previous = try lastManifest()
        // A node that caught up late does not put an older snapshot after a newer one.
        if let previous, previous.round >= round { return false }
        let previousIndex = previous.flatMap { try? readIndex($0) }
        let current = Dictionary(cut.models.map { ($0.name, $0.revision) }, uniquingKeysWith: { first, _ in first })
        var segments: [SnapshotIndex.Segment] = []
        var retired = previous?.chunks ?? []
        var kept = Set<String>()
        for segment in previousIndex?.segments ?? [] {
            let unchanged = segment.models.allSatisfy { model in
                current[model.name] == model.revision && !kept.contains(model.name)
                    && (changedAt[model.name] ?? 0) <= previous!.sequence
            }
            if unchanged {
                segments.append(segment)
                kept.formUnion(segment.models.map(\.name))
            } else {
                retired += segment.chunks
            }
        }
        // Room for a chunk's headers within the server's limit.
        let chunkSize = max(1024, nats.maxPayload - 512)
        var uploaded = 0
        func upload(_ bytes: [UInt8]) throws(ClusterError) -> [UInt64] {
            var chunks: [UInt64] = []
            var start = 0
            repeat {
                let end = min(start + chunkSize, bytes.count)
                uploaded += 1
                let id = "\(configuration.stream)-snapshot-\(round)-\(configuration.nodeName)-\(bootID)-\(uploaded)"
                chunks.append(try storeSnapshotMessage(chunkSubject, id: id, body: Array(bytes[start..<end])).sequence)
                start = end
            } while start < bytes.count
            return chunks
        }
        // The changed models, packed into segments of about a chunk (a larger model is a segment alone).
        var pending: [UInt8] = []
        var entries: [(name: String, revision: UInt64, offset: Int, length: Int)] = []
        func closeSegment() throws(ClusterError) {
            guard !entries.isEmpty else { return }
            segments.append(SnapshotIndex.Segment(chunks: try upload(pending), bytes: pending.count, models: entries))
            pending = []
            entries = []
        }
        for model in cut.models where !kept.contains(model.name) {
            let bytes = model.value.encoded()
            if !pending.isEmpty && pending.count + bytes.count > chunkSize { try closeSegment() }
            entries.append((model.name, model.revision, pending.count, bytes.count))
            pending += bytes
            if pending.count >= chunkSize { try closeSegment() }
        }
        try closeSegment()
        var made = SnapshotIndex(segments: segments, bindings: bindings, retired: retired)
        made.receipts = receipts.commits
        made.answers = receipts.answers
        let index = made.encoded()
        let manifest = SnapshotManifest(
            sequence: cut.sequence, events: cut.events, round: round, bytes: index.count,
            chunks: try upload(index))
        if let latest = try lastManifest(), latest.round >= round { return false }
        _ = try storeSnapshotMessage(manifestSubject, id: "\(configuration.stream)-snapshot-\(round)", body: manifest.encoded())
        // Nobody reads the snapshot two before any more: what it used and the last two do not goes.
        let stream = configuration.snapshotStream
        for sequence in previousIndex?.retired ?? [] { try nats.deleteMessage(stream, sequence: sequence) }
        try nats.purge(stream, subject: manifestSubject, keep: 2)
        try nats.purge(stream, subject: claimSubject, keep: 2)
        if previous == nil { try nats.purge(stream, subject: wholeSnapshotSubject) }
        return true
    }

    /// Stores one message of the snapshot stream, retrying with the same id while the stream does
    /// not answer (for up to 10 s).
    private func storeSnapshotMessage(_ subject: String, id: String, body: [UInt8])
        throws(ClusterError) -> (sequence: UInt64, duplicate: Bool)
    {
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

    /// The stream's commits in its last `limit` messages up to the applied one, oldest first, for the
    /// event hub's history (a client resuming with an id from before this node started gets the events
    /// it missed), and the event id they cover every commit through (what was read, when the stream did
    /// not deliver them all within a few seconds).
    func recentCommits(limit: Int) -> (commits: [Commit], through: UInt64) {
        let through = applied.load(ordering: .acquiring)
        guard through > 0, limit > 0, let bounds = try? nats.streamBounds(configuration.stream) else { return ([], 0) }
        let from = max(bounds.first, through >= UInt64(limit) ? through - UInt64(limit) + 1 : 1)
        guard from <= through,
            let subscription = try? NATSSubscription(nats, stream: configuration.stream, subject: subject, startSequence: from)
        else { return ([], 0) }
        let deadline = ContinuousClock.now + .seconds(5)
        var commits: [Commit] = []
        while ContinuousClock.now < deadline {
            // The commits subject only: binding changes are not events.
            guard let message = subscription.next(timeout: 1000, headers: CommitMessage.headerNames),
                message.sequence <= through, let list = try? CommitMessage.commits(in: message)
            else { break }
            commits += list
            if message.sequence == through || message.pending == 0 { break }
        }
        return (commits, commits.last?.sequence ?? 0)
    }
}
