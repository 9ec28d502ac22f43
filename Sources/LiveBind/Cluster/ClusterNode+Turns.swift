import Foundation

// The turn thread: applying what the stream delivered, running writes, publishing their commits with
// the whole-stream expectation, and rolling back what lost the race (see `ClusterNode`).
extension ClusterNode {
    func takeTurns() {
        while true {
            let next = turns.withLock { () -> Job?? in
                while inbox.isEmpty && jobs.isEmpty && appended.isEmpty && !hasRedo && !turns.isStopping { turns.wait() }
                if turns.isStopping { return .none }
                // What the stream refused is made again before the next write runs.
                let job = jobs.isEmpty || hasRedo ? nil : jobs.removeFirst()
                inTurn = job != nil || !appended.isEmpty
                return .some(job)
            }
            guard case .some(let job) = next else { return }
            applyDelivered()
            if !inTurn && hasRedo { turns.withLock { inTurn = true } }
            if turns.withLock({ inTurn }) { turn(job) }
            // What waits to be made again has its deadline from its first refusal until it is all in.
            if !hasRedo { redoDeadline = nil }
            takeSnapshotIfDue()
            turns.withLock {
                inTurn = false
                turns.broadcast()
            }
        }
    }

    /// Replays every delivered commit not applied yet (rolling back commits of this node not in the
    /// stream: the stream put another one first).
    func applyDelivered() {
        let delivered = turns.withLock { () -> [Delivered] in
            defer { inbox.removeAll(keepingCapacity: true) }
            return inbox
        }
        let done = applied.load(ordering: .relaxed)
        guard let store = turns.withLock({ store }) else { return }
        var commits: [Commit] = []
        func replayCommits() -> Bool {
            guard !commits.isEmpty else { return true }
            defer { commits.removeAll() }
            var refused: [Commit] = []
            let (replayed, calls, failure) = store.replay(commits) { [self] in refused = takeAppended() }
            keepRefused(refused, own: nil, ownIn: false)
            noteChanged(replayed)
            if let last = replayed.last { markApplied(last.sequence) }
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
                var refused: [Commit] = []
                store.advance(through: sequence) { [self] in refused = takeAppended() }
                keepRefused(refused, own: nil, ownIn: false)
                markApplied(sequence)
                record(change)
                bindingHandler.withLock { $0 }?(change)
            }
        }
        _ = replayCommits()
    }

    /// Runs `job` (nil: publishes commits made outside any write turn, and makes again what the
    /// stream refused) until its commits are in the stream or it fails.
    func turn(_ job: Job?) {
        var job = job
        let deadline = ContinuousClock.now + configuration.writeTimeout
        while true {
            // Once the write is answered, what is left to make again has its own deadline.
            let limit = job == nil ? redoDeadline ?? deadline : deadline
            turnDeadline = limit
            if let reason = divergence.withLock({ $0 }) { return finish(job, .diverged(reason)) }
            guard nats.isConnected else { return finish(job, .unavailable("this node has no connection to NATS")) }
            if job == nil { redo() }
            // Commits before `ownStart` were made outside any turn (Swift writes, what `redo` made);
            // the job's own commits are the ones its write made.
            let ownStart = turns.withLock { appended.count }
            runAgain = nil
            changedBindings = false
            job?.write()
            let own = turns.withLock { () -> ClosedRange<UInt64>? in
                guard appended.count > ownStart, let first = appended[ownStart...].first, let last = appended.last else { return nil }
                return first.sequence...last.sequence
            }
            if let rerun = runAgain {
                // A binding change of the write did not go in: commits made outside a turn were in
                // its way (made again later), or another node's message came first (applied first).
                conflicts.add(1, ordering: .relaxed)
                keepRefused(rollBack(), own: own, ownIn: false)
                guard rerun == .afterDelivery else { continue }
                guard waitForDelivery(until: limit) else {
                    return finish(job, .unavailable("the stream kept moving for \(configuration.writeTimeout)"))
                }
                applyDelivered()
                continue
            }
            let commits = turns.withLock { appended }
            if commits.isEmpty {
                guard job != nil else { return }
                // Nothing to publish (a failed precondition, an equal value): the answer stands only
                // if the state it was checked against was the stream's latest when the write ran.
                switch caughtUp(until: limit) {
                case .some(true): return finish(job, nil)
                case .some(false): continue
                case nil: return finish(job, .unavailable("the stream did not say how far it is"))
                }
            }
            let bodies = commits.map { $0.encodedRecord() }
            if let oversize = oversized(commits, bodies: bodies) {
                // Never storable: refused whole (the write and what its bindings made), not retried.
                let ownTooLarge = refuseOversized(oversize.sequences, own: own)
                if ownTooLarge, let refusedJob = job {
                    return finish(refusedJob, .tooLarge(bytes: oversize.largest, limit: nats.maxPayload))
                }
                continue
            }
            let (stored, outcome) = publish(commits, bodies: bodies, until: limit)
            if stored > 0 { persist(Array(commits.prefix(stored))) }
            switch outcome {
            case nil:
                return finish(job, nil)
            case .unavailable(let reason)?:
                return finish(job, .unavailable(reason))
            case .diverged, .tooLarge:
                return finish(job, outcome)
            case .conflict?:
                conflicts.add(1, ordering: .relaxed)
                // The write's own commit is in when a commit after `ownStart` was stored or its binding
                // change was: it is answered now, and what came after it is made again on the state the
                // stream leads to (its bindings catch up); otherwise the write runs again there.
                let ownIn = job == nil || stored > ownStart || changedBindings
                keepRefused(rollBack(), own: own, ownIn: ownIn)
                if ownIn, let answered = job {
                    finish(answered, nil)
                    job = nil
                }
                guard waitForDelivery(until: job == nil ? redoDeadline ?? limit : limit) else {
                    if job == nil { return giveUpRedo("the stream kept moving for \(configuration.writeTimeout)") }
                    return finish(job, .unavailable("the stream kept moving for \(configuration.writeTimeout)"))
                }
                applyDelivered()
            }
        }
    }

    /// Whether anything the stream refused waits to be made again (turn thread only).
    var hasRedo: Bool { !toRebase.isEmpty || !toCatchUp.isEmpty }

    /// Keeps what the stream refused (rolled back, in order) to be made again: commits bindings derived
    /// go to their bindings' catch-up; other commits (Swift writes) are rebased, except those of the
    /// running write (sequences `own`), which runs again unless its own commit is in (`ownIn`).
    func keepRefused(_ refused: [Commit], own: ClosedRange<UInt64>?, ownIn: Bool) {
        for commit in refused {
            if commit.depth > 0 {
                toCatchUp.append(commit)
            } else if let own, own.contains(commit.sequence) {
                if ownIn { toRebase.append(commit) }
            } else {
                toRebase.append(commit)
            }
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
                logger.warning("cluster: a write to \(commit.model) made outside a request no longer applies after another node's commit and was dropped: \(error)")
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

    /// The commits (by sequence) that would take more bytes as a message than the NATS servers take in
    /// one, with `bodies` their records, and the bytes the largest of them would take; nil when every
    /// one fits.
    func oversized(_ commits: [Commit], bodies: [[UInt8]]) -> (sequences: Set<UInt64>, largest: Int)? {
        let limit = nats.maxPayload
        // The headers `publish` adds, at their longest.
        let added = [("Nats-Msg-Id", "\(configuration.nodeName)-\(UInt64.max)-\(UInt64.max)"),
                     ("Nats-Expected-Last-Sequence", String(UInt64.max))]
        var sequences = Set<UInt64>()
        var largest = 0
        for (commit, body) in zip(commits, bodies) {
            let size = NATSConnection.messageSize(headers: commit.clusterHeaders + added, bodyCount: body.count)
            guard size > limit else { continue }
            sequences.insert(commit.sequence)
            largest = max(largest, size)
        }
        return sequences.isEmpty ? nil : (sequences, largest)
    }

    /// Rolls back every commit not in the stream when some of them (sequences `tooLarge`) can never be
    /// stored. Those of the running write (sequences `own`: its commit and its bindings') are refused
    /// with it when any of them is too large (returns true); others that fit are made again by a later
    /// turn, and those too large (a Swift write, a binding's derived commit) are dropped, logged and
    /// counted.
    func refuseOversized(_ tooLarge: Set<UInt64>, own: ClosedRange<UInt64>?) -> Bool {
        let refused = rollBack()
        let isOwn = { (commit: Commit) in own?.contains(commit.sequence) == true }
        let ownTooLarge = refused.contains { isOwn($0) && tooLarge.contains($0.sequence) }
        let others = refused.filter { !isOwn($0) }
        let dropped = others.filter { tooLarge.contains($0.sequence) }
        if !dropped.isEmpty {
            logger.warning("cluster: dropped \(dropped.count) commits larger than a message (\(nats.maxPayload) bytes): \(dropped.map(\.model))")
            droppedWrites.add(dropped.count, ordering: .relaxed)
        }
        keepRefused(others.filter { !tooLarge.contains($0.sequence) }, own: nil, ownIn: false)
        // A write whose commits all fit runs again, now that the oversized commits before it are gone.
        return ownTooLarge
    }

    /// Rolls back what was not stored (when anything is left) and tells the job.
    func finish(_ job: Job?, _ failure: Failure?) {
        if failure != nil {
            // Not stored, or stored without an answer (then it arrives through the consumer): not made again.
            let refused = turns.withLock({ appended.isEmpty }) ? [] : rollBack()
            if job == nil { keepRefused(refused, own: nil, ownIn: false) }
            switch failure {
            case .unavailable(let reason)?, .diverged(let reason)?: giveUpRedo(reason)
            case .tooLarge?: break   // what was kept to make again fits, and is made by a later turn
            default: giveUpRedo("lost the race for the stream")
            }
        }
        switch failure {
        case nil: job?.done(nil)
        case .unavailable(let reason)?:
            refusedWrites.add(1, ordering: .relaxed)
            job?.done(.unavailable(reason))
        case .diverged(let reason)?: job?.done(.diverged(reason))
        case .tooLarge(let bytes, let limit)?:
            refusedWrites.add(1, ordering: .relaxed)
            job?.done(.tooLarge(bytes: bytes, limit: limit))
        case .conflict?: job?.done(.unavailable("lost the race for the stream"))
        }
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

    /// Marks `commits` (the next ones of the stream) durable: clients may see them now.
    func persist(_ commits: [Commit]) {
        guard let last = commits.last?.sequence, let store = turns.withLock({ store }) else { return }
        turns.withLock { appended.removeAll { $0.sequence <= last } }
        noteChanged(commits)
        markApplied(last)
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
        return turns.withLock {
            while !inbox.contains(where: { $0.sequence > done }) && !turns.isStopping {
                if !turns.wait(until: deadline) { return false }
            }
            return !turns.isStopping
        }
    }

    /// Publishes `commits` in order, each expecting the one before it last in the stream. Returns how
    /// many were stored, and why the rest were not (nil: all were).
    func publish(_ commits: [Commit], bodies: [[UInt8]], until deadline: ContinuousClock.Instant) -> (Int, Failure?) {
        for (position, (commit, body)) in zip(commits, bodies).enumerated() {
            messageCounter += 1
            let headers = commit.clusterHeaders + [
                ("Nats-Msg-Id", "\(configuration.nodeName)-\(bootID)-\(messageCounter)"),
                ("Nats-Expected-Last-Sequence", String(commit.sequence - 1)),
            ]
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
