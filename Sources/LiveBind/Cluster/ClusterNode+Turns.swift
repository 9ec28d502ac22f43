import Foundation

// The turn thread: applying what the stream delivered, running writes, publishing their commits with
// the whole-stream expectation, and rolling back what lost the race (see `ClusterNode`).
extension ClusterNode {
    func takeTurns() {
        while true {
            condition.lock()
            while inbox.isEmpty && jobs.isEmpty && appended.isEmpty && !stopping { condition.wait() }
            if stopping { return condition.unlock() }
            let job = jobs.isEmpty ? nil : jobs.removeFirst()
            let pendingOwn = !appended.isEmpty
            inTurn = job != nil || pendingOwn
            condition.unlock()
            applyDelivered()
            if inTurn { turn(job) }
            takeSnapshotIfDue()
            condition.withLock {
                inTurn = false
                condition.broadcast()
            }
        }
    }

    /// Replays every delivered commit not applied yet (rolling back commits of this node not in the
    /// stream: the stream put another one first).
    func applyDelivered() {
        let delivered = condition.withLock { () -> [Delivered] in
            defer { inbox.removeAll(keepingCapacity: true) }
            return inbox
        }
        let done = applied.load(ordering: .relaxed)
        guard let store = condition.withLock({ store }) else { return }
        var commits: [Commit] = []
        func replayCommits() -> Bool {
            guard !commits.isEmpty else { return true }
            defer { commits.removeAll() }
            let (replayed, calls, failure) = store.replay(commits) { [self] in condition.withLock { appended.removeAll() } }
            if let last = replayed.last { applied.store(last.sequence, ordering: .releasing) }
            calls.run(replayed)
            if let failure { diverge(failure) }
            return failure == nil
        }
        for item in delivered where item.sequence > done {
            switch item {
            case .commit(let commit):
                commits.append(commit)
            case .binding(let sequence, let change):
                guard replayCommits() else { return }
                store.advance(through: sequence) { [self] in condition.withLock { appended.removeAll() } }
                applied.store(sequence, ordering: .releasing)
                record(change)
                bindingHandler.withLock { $0 }?(change)
            }
        }
        _ = replayCommits()
    }

    /// Runs `job` (nil: publishes commits made outside any write turn) until its commits are in the
    /// stream or it fails.
    func turn(_ job: Job?) {
        let deadline = ContinuousClock.now + configuration.writeTimeout
        turnDeadline = deadline
        while true {
            if let reason = divergence.withLock({ $0 }) { return finish(job, .diverged(reason)) }
            guard nats.isConnected else { return finish(job, .unavailable("this node has no connection to NATS")) }
            // Commits before `ownStart` were made outside any turn (Swift writes); the job's own
            // commit is the first after it.
            let ownStart = condition.withLock { appended.count }
            runAgain = nil
            changedBindings = false
            job?.write()
            if let rerun = runAgain {
                // A binding change of the write did not go in: commits made outside a turn were in
                // its way (dropped now), or another node's message came first (applied first).
                conflicts.add(1, ordering: .relaxed)
                rollBack()
                guard rerun == .afterDelivery else { continue }
                guard waitForDelivery(until: deadline) else {
                    return finish(job, .unavailable("the stream kept moving for \(configuration.writeTimeout)"))
                }
                applyDelivered()
                continue
            }
            let commits = condition.withLock { appended }
            if commits.isEmpty {
                guard job != nil else { return }
                // Nothing to publish (a failed precondition, an equal value): the answer stands only
                // if the state it was checked against was the stream's latest when the write ran.
                switch caughtUp(until: deadline) {
                case .some(true): return finish(job, nil)
                case .some(false): continue
                case nil: return finish(job, .unavailable("the stream did not say how far it is"))
                }
            }
            let (stored, outcome) = publish(commits, until: deadline)
            if stored > 0 { persist(Array(commits.prefix(stored))) }
            switch outcome {
            case nil:
                return finish(job, nil)
            case .unavailable(let reason)?:
                return finish(job, .unavailable(reason))
            case .diverged:
                return finish(job, outcome)
            case .conflict?:
                conflicts.add(1, ordering: .relaxed)
                if job == nil || stored > ownStart || changedBindings {
                    // The write's own commit is in (or there is no write to run again): what came after
                    // it (its bindings' commits, writes made outside a turn) lost the race.
                    rollBack()
                    if stored < commits.count {
                        logger.warning("cluster: \(commits.count - stored) commits lost the race for the stream and were dropped")
                    }
                    return finish(job, nil)
                }
                rollBack()
                guard waitForDelivery(until: deadline) else {
                    return finish(job, .unavailable("the stream kept moving for \(configuration.writeTimeout)"))
                }
                applyDelivered()
            }
        }
    }

    enum Failure: Error {
        case conflict
        case unavailable(String)
        case diverged(String)
    }

    /// Rolls back what was not stored (when anything is left) and tells the job.
    func finish(_ job: Job?, _ failure: Failure?) {
        if condition.withLock({ !appended.isEmpty }) && failure != nil { rollBack() }
        switch failure {
        case nil: job?.done(nil)
        case .unavailable(let reason)?:
            refusedWrites.add(1, ordering: .relaxed)
            job?.done(.unavailable(reason))
        case .diverged(let reason)?: job?.done(.diverged(reason))
        case .conflict?: job?.done(.unavailable("lost the race for the stream"))
        }
    }

    func rollBack() {
        guard let store = condition.withLock({ store }) else { return }
        store.rollBackToDurable { [self] in condition.withLock { appended.removeAll() } }
    }

    /// Marks `commits` (the next ones of the stream) durable: clients may see them now.
    func persist(_ commits: [Commit]) {
        guard let last = commits.last?.sequence, let store = condition.withLock({ store }) else { return }
        condition.withLock { appended.removeAll { $0.sequence <= last } }
        applied.store(last, ordering: .releasing)
        if streamLast.load(ordering: .relaxed) < last { streamLast.store(last, ordering: .relaxed) }
        store.logDidPersist(commits).run(commits)
    }

    /// Whether the store holds every commit the stream holds now: true when it does; false when it did
    /// not, after waiting for and applying them (the caller runs its write again); nil when the
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

    /// Waits until the consumer delivered a commit past the applied one; false at `deadline`.
    func waitForDelivery(until deadline: ContinuousClock.Instant) -> Bool {
        let done = applied.load(ordering: .relaxed)
        let limit = Date().addingTimeInterval(Self.seconds(deadline - .now))
        condition.lock()
        defer { condition.unlock() }
        while !inbox.contains(where: { $0.sequence > done }) && !stopping {
            if !condition.wait(until: limit) { return false }
        }
        return !stopping
    }

    /// Publishes `commits` in order, each expecting the one before it last in the stream. Returns how
    /// many were stored, and why the rest were not (nil: all were).
    func publish(_ commits: [Commit], until deadline: ContinuousClock.Instant) -> (Int, Failure?) {
        for (position, commit) in commits.enumerated() {
            messageCounter += 1
            let headers = commit.clusterHeaders + [
                ("Nats-Msg-Id", "\(configuration.nodeName)-\(bootID)-\(messageCounter)"),
                ("Nats-Expected-Last-Sequence", String(commit.sequence - 1)),
            ]
            let body = commit.encodedRecord()
            while true {
                let left = Int64(Self.seconds(deadline - .now) * 1000)
                guard left > 0 else { return (position, .unavailable("no answer from the stream in \(configuration.writeTimeout)")) }
                switch nats.publish(subject, headers: headers, body: body, timeout: min(2000, left)) {
                case .stored(let sequence, _):
                    guard sequence == commit.sequence else {
                        return (position, .diverged("commit \(commit.sequence) was stored at \(sequence)"))
                    }
                case .wrongLastSequence:
                    return (position, .conflict)
                case .unavailable(let reason):
                    if ContinuousClock.now + .milliseconds(100) >= deadline { return (position, .unavailable(reason)) }
                    Thread.sleep(forTimeInterval: 0.1)
                    continue
                case .refused(let reason):
                    return (position, .unavailable(reason))
                }
                break
            }
        }
        return (commits.count, nil)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
