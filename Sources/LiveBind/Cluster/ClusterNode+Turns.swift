import Foundation
import LiveBindEngine

// The turn thread: applying what the stream delivered, running the queued writes together, publishing
// their commits as one message with the whole-stream expectation, and rolling back what lost the race
// (see `ClusterNode`).
extension ClusterNode {
    /// The most writes one turn runs and publishes as one message.
    static let maxBatch = 256

    func takeTurns() {
        while true {
            let next = turns.withLock { () -> [Job]? in
                while inbox.isEmpty && jobs.isEmpty && appended.isEmpty && !hasRedo && !turns.isStopping { turns.wait() }
                if turns.isStopping { return nil }
                // What the stream refused is made again before the next writes run.
                let batch = hasRedo ? [] : takeBatch()
                inTurn = !batch.isEmpty || !appended.isEmpty
                return batch
            }
            guard let batch = next else { return }
            applyDelivered()
            if !inTurn && hasRedo { turns.withLock { inTurn = true } }
            if turns.withLock({ inTurn }) { turn(batch) }
            // What waits to be made again has its deadline from its first refusal until it is all in.
            if !hasRedo { redoDeadline = nil }
            takeSnapshotIfDue()
            turns.withLock {
                inTurn = false
                turns.broadcast()
            }
        }
    }

    /// With the lock held: the queued writes the next turn runs together, in order: up to `maxBatch`,
    /// and a write that changes the bindings (`alone`) by itself; `joining` a batch, none of those.
    func takeBatch(upTo limit: Int = maxBatch, joining: Bool = false) -> [Job] {
        guard let first = jobs.first, limit > 0, !(joining && first.alone) else { return [] }
        let count = first.alone ? 1 : jobs.prefix(limit).prefix { !$0.alone }.count
        defer { jobs.removeFirst(count) }
        return Array(jobs.prefix(count))
    }

    /// Replays every delivered commit not applied yet (rolling back commits of this node not in the
    /// stream: the stream put another message first). A message's first commit must follow the last
    /// one applied.
    func applyDelivered() {
        let delivered = turns.withLock { () -> [Delivered] in
            defer { inbox.removeAll(keepingCapacity: true) }
            return inbox
        }
        let done = applied.load(ordering: .relaxed)
        guard let store = turns.withLock({ store }) else { return }
        var commits: [Commit] = []
        var through: UInt64 = 0
        var next = store.visibleSequence + 1
        func replayCommits() -> Bool {
            guard !commits.isEmpty else { return true }
            defer { commits.removeAll() }
            var refused: [Commit] = []
            let (replayed, calls, failure) = store.replay(commits) { [self] in refused = takeAppended() }
            keepRefused(refused)
            noteChanged(replayed, at: through)
            learnReceipts(replayed)
            if failure == nil { markApplied(through) }
            calls.run(replayed)
            if let failure { diverge(failure) }
            return failure == nil
        }
        for item in delivered where item.sequence > done {
            switch item {
            case .commits(let sequence, let list, let numbered, let node):
                guard let first = list.first?.sequence, first == next || (!numbered && first > next) else {
                    _ = replayCommits()
                    return diverge("message \(sequence) starts at event \(list.first?.sequence ?? 0), not \(next)")
                }
                commits += list
                next = (list.last?.sequence ?? first) + 1
                through = sequence
                noteWriter(node)
            case .binding(let sequence, let change, let tag):
                guard replayCommits() else { return }
                var refused: [Commit] = []
                store.rollBackToDurable { [self] in refused = takeAppended() }
                keepRefused(refused)
                markApplied(sequence)
                record(change)
                bindingHandler.withLock { $0 }?(change, tag, sequence)
            }
        }
        _ = replayCommits()
    }

    /// Runs the writes of `batch` (none: publishes commits made outside any write turn, and makes
    /// again what the stream refused) until their commits are in the stream, as one message, or they fail.
    func turn(_ batch: [Job]) {
        var batch = batch
        let deadline = ContinuousClock.now + configuration.writeTimeout
        while true {
            // Once the writes are answered, what is left to make again has its own deadline.
            let limit = batch.isEmpty ? redoDeadline ?? deadline : deadline
            turnDeadline = limit
            if let reason = divergence.withLock({ $0 }) { return finish(batch, .diverged(reason)) }
            guard nats.isConnected else { return finish(batch, .unavailable("this node has no connection to NATS")) }
            let alone = batch.first?.alone ?? false
            if !alone && !batch.isEmpty && waitForTurn(until: limit) {
                // More writes may have come meanwhile: they go in the same message.
                turns.withLock { batch += takeBatch(upTo: Self.maxBatch - batch.count, joining: true) }
            }
            if !alone { redo() }
            runAgain = nil
            changedBindings = false
            runningJobs = true
            for job in batch { job.write() }
            runningJobs = false
            // What the writes' bindings derive on the store's relay thread goes in the same message.
            if !batch.isEmpty, let store = turns.withLock({ store }) {
                _ = store.waitUntilDelivered(timeout: min(.seconds(1), limit - .now))
            }
            if let rerun = runAgain {
                // A binding change of the write did not go in: commits made outside a turn were in
                // its way (made again later), or another node's message came first (applied first).
                conflicts.add(1, ordering: .relaxed)
                keepRefused(rollBack())
                guard ContinuousClock.now < limit else {
                    return finish(batch, .unavailable("the stream kept moving for \(configuration.writeTimeout)"))
                }
                guard rerun == .afterDelivery else { continue }
                guard waitForDelivery(until: limit) else {
                    return finish(batch, .unavailable("the stream kept moving for \(configuration.writeTimeout)"))
                }
                applyDelivered()
                continue
            }
            let commits = turns.withLock { appended }
            if commits.isEmpty {
                guard !batch.isEmpty else { return }
                // Nothing to publish (failed preconditions, equal values): the answers stand only if
                // the state they were checked against was the stream's latest when the writes ran.
                switch caughtUp(until: limit) {
                case .some(true): return finish(batch, nil)
                case .some(false): continue
                case nil: return finish(batch, .unavailable("the stream did not say how far it is"))
                }
            }
            let expected = applied.load(ordering: .relaxed)
            guard let store = turns.withLock({ store }), commits[0].sequence == store.visibleSequence + 1 else {
                diverge("commit \(commits[0].sequence) does not follow the last one applied")
                return finish(batch, .diverged("commits out of order"))
            }
            let message = encode(commits, expectingLast: expected)
            guard message.size <= nats.maxPayload else {
                guard let retry = refuseOversized(&batch) else { return }
                if retry { continue } else { return }
            }
            switch publish(message.headers, body: message.body, until: limit) {
            case .success(let sequence):
                guard sequence == expected + 1 else {
                    diverge("the commits from \(commits[0].sequence) were stored at \(sequence), not \(expected + 1)")
                    return finish(batch, .diverged("commits stored out of order"))
                }
                persist(commits, at: sequence)
                return finish(batch, nil)
            case .failure(.conflict):
                conflicts.add(1, ordering: .relaxed)
                // A binding change of the write is in: the write is answered, and what its binding
                // derived is made again on the state the stream leads to (the binding catches up).
                if changedBindings {
                    keepRefused(rollBack(), jobsAnswered: true)
                    finish(batch, nil)
                    batch = []
                } else {
                    keepRefused(rollBack())
                }
                guard waitForDelivery(until: batch.isEmpty ? redoDeadline ?? limit : limit) else {
                    return finish(batch, .unavailable("the stream kept moving for \(configuration.writeTimeout)"))
                }
                applyDelivered()
            case .failure(let failure):
                return finish(batch, failure)
            }
        }
    }

    /// The message carrying `commits` after the stream's message `last`.
    func encode(_ commits: [Commit], expectingLast last: UInt64) -> (headers: [(String, String)], body: [UInt8], size: Int) {
        messageCounter += 1
        let headers = [
            (CommitMessage.sequenceHeader, String(commits[0].sequence)),
            (CommitMessage.nodeHeader, configuration.nodeName),
            ("Nats-Msg-Id", "\(configuration.nodeName)-\(bootID)-\(messageCounter)"),
            ("Nats-Expected-Last-Sequence", String(last))
        ]
        let body = CommitMessage.body(commits, records: commits.map { $0.encodedRecord() })
        return (headers, body, NATSConnection.messageSize(headers: headers, bodyCount: body.count))
    }

    /// When the turn's commits do not fit in one message: rolls them back and decides what goes next.
    /// Several writes: the first half runs again now, the rest next (returns true). One write whose
    /// commits (its own and its bindings') do not fit alone: it is refused with 413, changing nothing
    /// (returns false). Commits made outside a turn that do not fit alone are dropped, logged and
    /// counted; those that fit are made again by a turn of their own, before the write runs again.
    /// Returns nil when the turn is over.
    func refuseOversized(_ batch: inout [Job]) -> Bool? {
        let refused = rollBack()
        if batch.count > 1 {
            keepRefused(refused)
            let half = batch.count / 2
            turns.withLock { jobs.insert(contentsOf: batch[half...], at: 0) }
            batch.removeLast(batch.count - half)
            return true
        }
        let outside = turns.withLock { madeOutside }
        let others = refused.filter { outside.contains($0.sequence) }
        let own = refused.filter { !outside.contains($0.sequence) }
        if !batch.isEmpty, !own.isEmpty {
            let size = encode(own, expectingLast: UInt64.max).size
            if size > nats.maxPayload {
                keepRefused(others)
                finish(batch, .tooLarge(bytes: size, limit: nats.maxPayload))
                return false
            }
        }
        if !others.isEmpty && encode(others, expectingLast: UInt64.max).size > nats.maxPayload {
            logger.warning(
                "cluster: dropped \(others.count) commits made outside a request, together larger than a message (\(nats.maxPayload) bytes): \(Set(others.map(\.model)).sorted())"
            )
            droppedWrites.add(others.filter { $0.depth == 0 }.count, ordering: .relaxed)
            turns.withLock { madeOutside.removeAll() }
        } else {
            keepRefused(others)
        }
        guard !batch.isEmpty else { return nil }
        // The write fits alone: it runs once what was made outside a turn is in (or dropped). Once:
        // what its own bindings derive on another thread counts as made outside, and comes again.
        if hasRedo {
            guard batch[0].setAside == 0 else {
                finish(batch, .tooLarge(bytes: encode(refused, expectingLast: UInt64.max).size, limit: nats.maxPayload))
                return false
            }
            batch[0].setAside += 1
            turns.withLock { jobs.insert(contentsOf: batch, at: 0) }
            batch = []
            return nil
        }
        return true
    }

    /// How long a node waits for the node after the last writer, in the turn order, per node before it.
    static let turnSlot = Duration.microseconds(2000)

    /// Lets the nodes that write take turns instead of racing for every message: the nodes that
    /// published in the last second, sorted by name, form a ring; the one after the last writer
    /// publishes at once, each later one waits `turnSlot` more for the stream to move first, so that
    /// this node, having just written, comes last. Correctness does not depend on it (the stream's
    /// expectation decides); it keeps nodes from refusing each other's messages. Applies what the
    /// stream delivered meanwhile; returns whether it waited.
    func waitForTurn(until limit: ContinuousClock.Instant) -> Bool {
        let now = ContinuousClock.now
        let me = configuration.nodeName
        let ring = ([me] + writers.compactMap { now - $0.value < .seconds(1) && $0.key != me ? $0.key : nil }).sorted()
        guard ring.count > 1, let last = lastWriter, let mine = ring.firstIndex(of: me),
            let theirs = ring.firstIndex(of: last)
        else { return false }
        let slot = (mine - theirs - 1 + ring.count) % ring.count
        guard slot > 0 else { return false }
        if waitForDelivery(until: min(now + Self.turnSlot * slot, limit)) { applyDelivered() }
        return true
    }

    /// Notes that `node` published the last message applied (nil: a node of version 0.1).
    func noteWriter(_ node: String?) {
        lastWriter = node
        if let node { writers[node] = .now }
        if writers.count > 64 {
            let now = ContinuousClock.now
            writers = writers.filter { now - $0.value < .seconds(1) }
        }
    }

    /// Tells the server the receipts of idempotent writes among `commits`, now in the stream.
    func learnReceipts(_ commits: [Commit]) {
        guard commits.contains(where: { $0.tag != nil }), let learn = receiptHandler.withLock({ $0 }) else { return }
        let now = Date().timeIntervalSince1970
        for commit in commits { if let receipt = CommitReceipt(commit, created: now) { learn(receipt) } }
    }

    /// Whether anything the stream refused waits to be made again (turn thread only).
    var hasRedo: Bool { !toRebase.isEmpty || !toCatchUp.isEmpty }

    /// Keeps what the stream refused (rolled back, in order) to be made again, when it was made outside
    /// the turn's writes (or by writes already answered, `jobsAnswered`): writes go to be rebased
    /// (applied again), commits bindings derived to their bindings' catch-up. What the turn's writes
    /// made is not kept: they run again.
    func keepRefused(_ refused: [Commit], jobsAnswered: Bool = false) {
        let outside = turns.withLock { () -> Set<UInt64> in
            defer { madeOutside.removeAll() }
            return madeOutside
        }
        for commit in refused where jobsAnswered || outside.contains(commit.sequence) {
            if commit.depth > 0 { toCatchUp.append(commit) } else { toRebase.append(commit) }
        }
        if hasRedo && redoDeadline == nil { redoDeadline = .now + configuration.writeTimeout }
    }

    /// Makes again what the stream refused, on the current state: Swift writes are applied again
    /// (last writer wins; one that no longer applies is dropped, logged and counted), then the bindings
    /// whose derived commits were refused catch up. Their commits are published by the turn.
    func redo() {
        guard hasRedo, let store = turns.withLock({ store }) else { return }
        if let limit = redoDeadline, ContinuousClock.now >= limit {
            return giveUpRedo("the stream kept moving for \(configuration.writeTimeout)")
        }
        let rebase = toRebase, derived = toCatchUp
        toRebase = []
        toCatchUp = []
        for commit in rebase {
            do throws(StoreError) {
                try store.reapply(commit)
            } catch {
                droppedWrites.add(1, ordering: .relaxed)
                logger.warning(
                    "cluster: a write to \(commit.model) made outside a request no longer applies after another node's commit and was dropped: \(error)"
                )
            }
        }
        if !derived.isEmpty { catchUpHandler.withLock { $0 }?(derived) }
    }

    /// Drops what waits to be made again, with a log line.
    func giveUpRedo(_ reason: String) {
        if hasRedo {
            logger.warning("cluster: gave up making \(toRebase.count) writes and \(toCatchUp.count) bindings' commits again: \(reason)")
            droppedWrites.add(toRebase.count, ordering: .relaxed)
        }
        toRebase = []
        toCatchUp = []
        redoDeadline = nil
    }

    enum Failure: Error {
        case conflict
        case unavailable(String)
        case diverged(String)
        case tooLarge(bytes: Int, limit: Int)
    }

    /// Rolls back what was not stored (when anything is left) and tells every write of `batch`.
    func finish(_ batch: [Job], _ failure: Failure?) {
        if let failure {
            // Not stored, or stored without an answer (then it arrives through the consumer): not made again.
            if !turns.withLock({ appended.isEmpty }) { keepRefused(rollBack()) }
            switch failure {
            case .unavailable(let reason), .diverged(let reason): giveUpRedo(reason)
            case .tooLarge: break  // what was kept to make again fits, and is made by a later turn
            case .conflict: giveUpRedo("lost the race for the stream")
            }
        }
        let error: ClusterError?
        switch failure {
        case nil: error = nil
        case .unavailable(let reason)?: error = .unavailable(reason)
        case .diverged(let reason)?: error = .diverged(reason)
        case .tooLarge(let bytes, let limit)?: error = .tooLarge(bytes: bytes, limit: limit)
        case .conflict?: error = .unavailable("lost the race for the stream")
        }
        switch error {
        case nil, .diverged?: break
        default: refusedWrites.add(batch.count, ordering: .relaxed)
        }
        for job in batch { job.done(error) }
    }

    /// Rolls back every commit of this node not in the stream; returns them.
    func rollBack() -> [Commit] {
        guard let store = turns.withLock({ store }) else { return [] }
        var refused: [Commit] = []
        store.rollBackToDurable { [self] in refused = takeAppended() }
        return refused
    }

    /// Empties `appended`; returns what it held.
    func takeAppended() -> [Commit] {
        turns.withLock {
            defer { appended.removeAll() }
            return appended
        }
    }

    /// Marks `commits`, stored as the stream's message `sequence`, durable: clients may see them now.
    func persist(_ commits: [Commit], at sequence: UInt64) {
        guard let last = commits.last?.sequence, let store = turns.withLock({ store }) else { return }
        turns.withLock {
            appended.removeAll { $0.sequence <= last }
            madeOutside = madeOutside.filter { $0 > last }
        }
        noteChanged(commits, at: sequence)
        noteWriter(configuration.nodeName)
        learnReceipts(commits)
        if streamLast.load(ordering: .relaxed) < sequence { streamLast.store(sequence, ordering: .relaxed) }
        // Visible before `applied` moves: who waits for an event id reads both.
        let calls = store.logDidPersist(commits)
        markApplied(sequence)
        calls.run(commits)
    }

    /// Whether the store holds every commit the stream holds now: true when it does; false when it did
    /// not, after waiting for and applying them (the caller runs its writes again); nil when the
    /// stream did not answer by `deadline`.
    func caughtUp(until deadline: ContinuousClock.Instant) -> Bool? {
        guard let last = try? nats.streamLastSequence(configuration.stream) else { return nil }
        if last <= applied.load(ordering: .relaxed) { return true }
        while applied.load(ordering: .relaxed) < last {
            guard waitForDelivery(until: deadline) else { return nil }
            applyDelivered()
        }
        return false
    }

    /// Waits until the consumer delivered a message past the applied one; false at `deadline`.
    func waitForDelivery(until deadline: ContinuousClock.Instant) -> Bool {
        let done = applied.load(ordering: .relaxed)
        return turns.withLock {
            while !inbox.contains(where: { $0.sequence > done }) && !turns.isStopping {
                if !turns.wait(until: deadline) { return false }
            }
            return !turns.isStopping
        }
    }

    /// Publishes one message, retrying with the same `Nats-Msg-Id` while the stream does not answer
    /// (the stream deduplicates), until `deadline`. Returns the sequence it was stored at.
    func publish(_ headers: [(String, String)], body: [UInt8], until deadline: ContinuousClock.Instant) -> Result<UInt64, Failure> {
        while true {
            let left = Int64(Self.seconds(deadline - .now) * 1000)
            guard left > 0 else { return .failure(.unavailable("no answer from the stream in \(configuration.writeTimeout)")) }
            switch nats.publish(subject, headers: headers, body: body, timeout: min(2000, left)) {
            case .stored(let sequence, _):
                return .success(sequence)
            case .wrongLastSequence:
                return .failure(.conflict)
            case .unavailable(let reason):
                if ContinuousClock.now + .milliseconds(100) >= deadline { return .failure(.unavailable(reason)) }
                Thread.sleep(forTimeInterval: 0.1)
            case .refused(let reason):
                return .failure(.unavailable(reason))
            }
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
