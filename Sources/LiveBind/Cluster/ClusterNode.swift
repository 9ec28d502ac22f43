import Foundation
import Logging
import Synchronization

/// One node of a cluster: the store's commit log on a NATS JetStream stream that every node writes to
/// and follows. The stream's sequence is the one order: a commit's sequence (its event id) is its
/// stream sequence on every node.
///
/// Writes take turns on one thread (the *turn thread*). A turn applies every commit the stream
/// delivered so far, runs the write against that state (so `If-Match` and JSON Patch `test` see the
/// state the write is ordered after), and publishes the commits it made (with the bindings' derived
/// ones) with `Nats-Expected-Last-Sequence` set to the sequence before each: the stream stores them
/// only if nothing came in between. Once stored they are durable, and the write is answered. When
/// another node came first, the commits are rolled back, the node applies what came in, and the write
/// runs again. Commits of other nodes arrive through an ordered consumer (a second thread) and are
/// replayed on the turn thread without running bindings.
///
/// Publishes that get no answer (an election, a lost server) are retried with the same
/// `Nats-Msg-Id`, which the stream deduplicates, until ``ClusterConfiguration/writeTimeout``; then the
/// write gets ``ClusterError/unavailable(_:)`` (a 503). A node without a connection refuses writes at once.
final class ClusterNode: CommitLog, @unchecked Sendable {
    // `@unchecked`: the fields under `condition` are only touched with it locked; `subscription`,
    // `threads` and `messageCounter` only by the thread that owns them, as marked.
    let configuration: ClusterConfiguration
    let nats: NATSConnection
    let logger: Logger
    /// Where commits are published: `<stream>.commits`.
    let subject: String
    /// The last stream sequence applied to the store.
    let applied = Atomic<UInt64>(0)
    /// The stream's last sequence as last heard of (a delivery and what followed it, or an ack).
    let streamLast = Atomic<UInt64>(0)
    /// Writes refused and conflicts retried, for `/metrics`.
    let conflicts = Atomic<Int>(0), refusedWrites = Atomic<Int>(0)
    /// Set when a commit of the stream did not apply here: the node takes no more writes.
    let divergence = OrderedMutex<String?>(nil)

    /// A write waiting for its turn.
    struct Job: Sendable {
        /// Makes the write's commits in the store; run again after a lost race.
        let write: @Sendable () -> Void
        /// Told once: nil when the commits are in the stream and applied (or the write made none).
        let done: @Sendable (ClusterError?) -> Void
    }

    /// What the consumer delivered: a commit, or a change to the bindings made over HTTP.
    enum Delivered: Sendable {
        case commit(Commit)
        case binding(sequence: UInt64, ClusterBindingChange)

        var sequence: UInt64 {
            switch self {
            case .commit(let commit): commit.sequence
            case .binding(let sequence, _): sequence
            }
        }
    }

    private let condition = NSCondition()
    private var inbox: [Delivered] = []
    private var jobs: [Job] = []
    /// Commits the store made and that are not in the stream (nor rolled back) yet, in order.
    private var appended: [Commit] = []
    private var inTurn = false
    private var stopping = false
    private weak var store: Store?
    private var threads: [Thread] = []
    /// Turn thread only: numbers this node's messages for their `Nats-Msg-Id`.
    private var messageCounter: UInt64 = 0
    /// Turn thread only: the current turn's deadline, and whether its write must run again (a
    /// binding change lost the race for the stream).
    private var turnDeadline = ContinuousClock.now
    private var runAgain: Rerun?
    /// Turn thread only: whether the current write put a binding change in the stream (it must not
    /// run again then).
    private var changedBindings = false
    private enum Rerun { case now, afterDelivery }
    /// Turn thread only: the bindings made over HTTP, as the stream left them (for snapshots).
    private var httpBindings: [(id: String, definition: JSON, enabled: Bool)] = []
    /// Applies another node's binding change to this node's registry (set by the server).
    private let bindingHandler = OrderedMutex<(@Sendable (ClusterBindingChange) -> Void)?>(nil)
    /// Turn thread only (and `loadSnapshot` before it starts): the last snapshot interval taken.
    private var snapshotRound: UInt64 = 0
    /// Encodes and publishes snapshots, so that no write waits for them.
    private let snapshotQueue = DispatchQueue(label: "livebind-cluster-snapshots")
    /// Snapshots published, for `/metrics`.
    let snapshotsTaken = Atomic<Int>(0)
    private let bootID = UInt64.random(in: 1...UInt64.max)

    /// Connects to the cluster's NATS servers and makes the stream when missing. Nothing is read
    /// until ``start(store:)``.
    init(configuration: ClusterConfiguration, logger: Logger) throws(ClusterError) {
        self.configuration = configuration
        self.logger = logger
        subject = configuration.stream + ".commits"
        nats = try NATSConnection(servers: configuration.servers, name: "livebind " + configuration.nodeName)
        let last = try Self.retrying(until: .now + configuration.startTimeout) { () throws(ClusterError) -> UInt64 in
            let last = try nats.ensureStream(configuration.stream, subjects: [configuration.stream + ".>"],
                                             replicas: configuration.replicas,
                                             maxMessages: configuration.maxCommits > 0 ? Int64(configuration.maxCommits) : -1,
                                             maxBytes: -1)
            if configuration.snapshotInterval > 0 {
                _ = try nats.ensureStream(configuration.snapshotStream, subjects: [configuration.snapshotStream + ".>"],
                                          replicas: configuration.replicas, maxMessages: 4, maxBytes: -1)
            }
            return last
        }
        streamLast.store(last, ordering: .relaxed)
    }

    /// The models as the last snapshot has them, and its sequence (none: empty at 0). Throws when the
    /// stream no longer holds every commit after it. Call before ``start()``: the node follows the
    /// stream from the snapshot's sequence on.
    func loadSnapshot() throws(ClusterError) -> ClusterSnapshot {
        var snapshot = ClusterSnapshot(sequence: 0, models: [])
        if configuration.snapshotInterval > 0,
           let message = try nats.lastMessage(configuration.snapshotStream, subject: snapshotSubject, headers: []) {
            snapshot = try ClusterSnapshot(body: message.body)
        }
        let bounds = try nats.streamBounds(configuration.stream)
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
    private var snapshotSubject: String { configuration.snapshotStream + ".models" }

    /// Retries `body` while it throws, every 250 ms, until `deadline` (a stream being elected at start).
    private static func retrying<T>(until deadline: ContinuousClock.Instant, _ body: () throws(ClusterError) -> T)
        throws(ClusterError) -> T
    {
        while true {
            do {
                return try body()
            } catch {
                if ContinuousClock.now >= deadline { throw error }
                Thread.sleep(forTimeInterval: 0.25)
            }
        }
    }

    // MARK: CommitLog

    func attach(to store: Store) {
        condition.withLock { self.store = store }
    }

    /// Keeps `commit` for the current turn (or a turn of its own when no write is running).
    func append(_ commit: Commit) {
        condition.lock()
        appended.append(commit)
        condition.signal()
        condition.unlock()
    }

    /// Waits (up to the write timeout and a second) until no write is queued or running.
    func flush() {
        let deadline = Date().addingTimeInterval(Double(configuration.writeTimeout.components.seconds) + 1)
        condition.lock()
        while (inTurn || !jobs.isEmpty || !appended.isEmpty) && !stopping {
            if !condition.wait(until: deadline) { break }
        }
        condition.unlock()
    }

    // MARK: Running

    /// Starts following the stream from its beginning and taking turns; returns once the store holds
    /// every commit the stream had at start (throws when that takes longer than the start timeout).
    func start() throws(ClusterError) {
        // The bindings made over HTTP that the snapshot holds, before the commits after it.
        if let handler = bindingHandler.withLock({ $0 }) {
            for binding in httpBindings {
                handler(.create(id: binding.id, definition: binding.definition))
                if !binding.enabled { handler(.setEnabled(id: binding.id, enabled: false)) }
            }
        }
        let subscription = try NATSSubscription(nats, stream: configuration.stream, subject: configuration.stream + ".>",
                                                startSequence: applied.load(ordering: .relaxed) + 1)
        let reader = Thread { [self] in read(subscription) }
        reader.name = "livebind-cluster-read"
        let turns = Thread { [self] in takeTurns() }
        turns.name = "livebind-cluster-turns"
        condition.withLock { threads = [reader, turns] }
        reader.start()
        turns.start()
        let target = streamLast.load(ordering: .relaxed)
        let deadline = ContinuousClock.now + configuration.startTimeout
        while applied.load(ordering: .acquiring) < target {
            if let reason = divergence.withLock({ $0 }) { throw .diverged(reason) }
            if ContinuousClock.now >= deadline {
                throw .unavailable("loaded \(applied.load(ordering: .relaxed)) of \(target) commits in time")
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        logger.info("cluster: node \(configuration.nodeName) applied the stream \(configuration.stream) through \(target)")
    }

    /// Stops both threads (queued writes get 503), waits for a snapshot being published, and closes
    /// the connection. Safe to call twice.
    func stop() {
        let (running, waiting) = condition.withLock { () -> ([Thread], [Job]) in
            stopping = true
            condition.broadcast()
            defer { jobs.removeAll() }
            return (threads, jobs)
        }
        for job in waiting { job.done(.unavailable("the server is stopping")) }
        while running.contains(where: { $0.isExecuting }) { Thread.sleep(forTimeInterval: 0.01) }
        snapshotQueue.sync {}
        nats.close()
    }

    /// Runs `write` in this node's next turn; `done` is told when its commits are applied or why not.
    func submit(_ write: @escaping @Sendable () -> Void, done: @escaping @Sendable (ClusterError?) -> Void) {
        if let reason = divergence.withLock({ $0 }) { return done(.diverged(reason)) }
        guard nats.isConnected else {
            refusedWrites.add(1, ordering: .relaxed)
            return done(.unavailable("this node has no connection to NATS"))
        }
        let accepted = condition.withLock { () -> Bool in
            guard !stopping else { return false }
            jobs.append(Job(write: write, done: done))
            condition.signal()
            return true
        }
        if !accepted { done(.unavailable("the server is stopping")) }
    }

    // MARK: The reading thread

    private func read(_ subscription: NATSSubscription) {
        let names = [Commit.modelHeader, Commit.revisionHeader, ClusterBindingChange.operationHeader, ClusterBindingChange.idHeader]
        while !condition.withLock({ stopping }) {
            guard let message = subscription.next(timeout: 250, headers: names) else { continue }
            let last = message.sequence + message.pending
            if streamLast.load(ordering: .relaxed) < last { streamLast.store(last, ordering: .relaxed) }
            let delivered: Delivered
            if message.subject == bindingSubject {
                guard let change = ClusterBindingChange(message: message) else {
                    diverge("message \(message.sequence) is no binding change this code reads")
                    return
                }
                delivered = .binding(sequence: message.sequence, change)
            } else {
                do {
                    delivered = .commit(try Commit(message: message))
                } catch {
                    diverge(error.description)
                    return
                }
            }
            condition.lock()
            inbox.append(delivered)
            condition.signal()
            condition.unlock()
        }
    }

    private func diverge(_ reason: String) {
        logger.error("cluster: \(reason); this node takes no more writes")
        divergence.withLock { $0 = $0 ?? reason }
    }

    // MARK: The turn thread

    private func takeTurns() {
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

    /// Takes a snapshot once the applied sequence entered a new snapshot interval: the cut is taken
    /// here (between turns nothing is pending, so the visible state is the applied one; the documents
    /// are copy-on-write), the encoding and publishing on the snapshot queue. Every node does so; the
    /// stream keeps the first message of each interval (`Nats-Msg-Id` = the interval's number).
    private func takeSnapshotIfDue() {
        let interval = UInt64(configuration.snapshotInterval)
        guard interval > 0, applied.load(ordering: .relaxed) / interval > snapshotRound,
              let store = condition.withLock({ store }) else { return }
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

    /// Replays every delivered commit not applied yet (rolling back commits of this node not in the
    /// stream: the stream put another one first).
    private func applyDelivered() {
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

    /// Keeps `change` in the list of bindings made over HTTP that snapshots carry.
    private func record(_ change: ClusterBindingChange) {
        switch change {
        case .create(let id, let definition):
            httpBindings.removeAll { $0.id == id }
            httpBindings.append((id, definition, true))
        case .setEnabled(let id, let enabled):
            if let index = httpBindings.firstIndex(where: { $0.id == id }) { httpBindings[index].enabled = enabled }
        case .delete(let id):
            httpBindings.removeAll { $0.id == id }
        }
    }

    /// Sets what applies other nodes' binding changes to this node's registry. Call before ``start()``.
    func setBindingHandler(_ handler: @escaping @Sendable (ClusterBindingChange) -> Void) {
        bindingHandler.withLock { $0 = handler }
    }

    /// Puts `change` in the stream before the write that makes it applies it here: called on the turn
    /// thread by a write (`/bindings`) once it checked the change. Throws when the stream does not take
    /// it; when another node's message came first, the turn runs the write again once this node has
    /// applied that message.
    func publishBindingChange(_ change: ClusterBindingChange) throws(ClusterError) {
        guard condition.withLock({ appended.isEmpty }), let store = condition.withLock({ store }) else {
            runAgain = .now
            throw .unavailable("commits of this node were not in the stream yet")
        }
        messageCounter += 1
        let expected = applied.load(ordering: .relaxed)
        let (headers, body) = change.message
        let all = headers + [("Nats-Msg-Id", "\(configuration.nodeName)-\(bootID)-\(messageCounter)"),
                             ("Nats-Expected-Last-Sequence", String(expected))]
        while true {
            let left = Int64(Self.seconds(turnDeadline - .now) * 1000)
            guard left > 0 else { throw .unavailable("no answer from the stream in \(configuration.writeTimeout)") }
            switch nats.publish(bindingSubject, headers: all, body: body, timeout: min(2000, left)) {
            case .stored(let sequence, _):
                guard sequence == expected + 1 else {
                    diverge("binding change \(change.id) was stored at \(sequence), not \(expected + 1)")
                    throw .diverged("binding change stored out of order")
                }
                store.advance(through: sequence) {}
                applied.store(sequence, ordering: .releasing)
                changedBindings = true
                if streamLast.load(ordering: .relaxed) < sequence { streamLast.store(sequence, ordering: .relaxed) }
                record(change)
                return
            case .wrongLastSequence:
                runAgain = .afterDelivery
                throw .unavailable("another node wrote first")
            case .unavailable(let reason):
                if ContinuousClock.now + .milliseconds(100) >= turnDeadline { throw .unavailable(reason) }
                Thread.sleep(forTimeInterval: 0.1)
            case .refused(let reason):
                throw .unavailable(reason)
            }
        }
    }

    /// Where binding changes are published.
    private var bindingSubject: String { configuration.stream + ".bindings" }

    /// Runs `job` (nil: publishes commits made outside any write turn) until its commits are in the
    /// stream or it fails.
    private func turn(_ job: Job?) {
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

    private enum Failure: Error {
        case conflict
        case unavailable(String)
        case diverged(String)
    }

    /// Rolls back what was not stored (when anything is left) and tells the job.
    private func finish(_ job: Job?, _ failure: Failure?) {
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

    private func rollBack() {
        guard let store = condition.withLock({ store }) else { return }
        store.rollBackToDurable { [self] in condition.withLock { appended.removeAll() } }
    }

    /// Marks `commits` (the next ones of the stream) durable: clients may see them now.
    private func persist(_ commits: [Commit]) {
        guard let last = commits.last?.sequence, let store = condition.withLock({ store }) else { return }
        condition.withLock { appended.removeAll { $0.sequence <= last } }
        applied.store(last, ordering: .releasing)
        if streamLast.load(ordering: .relaxed) < last { streamLast.store(last, ordering: .relaxed) }
        store.logDidPersist(commits).run(commits)
    }

    /// Whether the store holds every commit the stream holds now: true when it does; false when it did
    /// not, after waiting for and applying them (the caller runs its write again); nil when the
    /// stream did not answer by `deadline`.
    private func caughtUp(until deadline: ContinuousClock.Instant) -> Bool? {
        guard let last = try? nats.streamLastSequence(configuration.stream) else { return nil }
        if last <= applied.load(ordering: .relaxed) { return true }
        while applied.load(ordering: .relaxed) < last {
            guard waitForDelivery(until: deadline) else { return nil }
            applyDelivered()
        }
        return false
    }

    /// Waits until the consumer delivered a commit past the applied one; false at `deadline`.
    private func waitForDelivery(until deadline: ContinuousClock.Instant) -> Bool {
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
    private func publish(_ commits: [Commit], until deadline: ContinuousClock.Instant) -> (Int, Failure?) {
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

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Returns once the store applied `sequence`, when the stream has it, or after `timeout`.
    func waitUntilApplied(through sequence: UInt64, timeout: Duration) {
        let deadline = ContinuousClock.now + timeout
        while applied.load(ordering: .acquiring) < sequence, streamLast.load(ordering: .relaxed) >= sequence,
              ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.005)
        }
    }

    // MARK: Status

    /// What `/healthz` and `/metrics` show.
    var status: ClusterStatus {
        let applied = applied.load(ordering: .relaxed), last = streamLast.load(ordering: .relaxed)
        let connected = nats.isConnected
        let diverged = divergence.withLock { $0 }
        let role = diverged != nil ? "diverged" : !connected ? "disconnected" : last > applied ? "catching-up" : "peer"
        return ClusterStatus(node: configuration.nodeName, connected: connected && diverged == nil, applied: applied,
                             lag: last > applied ? last - applied : 0, role: role)
    }
}

/// A cluster node's state as `/healthz` and `/metrics` show it.
struct ClusterStatus: Sendable {
    var node: String
    /// Whether the node can take writes: connected to NATS and following the stream.
    var connected: Bool
    /// The last stream sequence applied here.
    var applied: UInt64
    /// How many commits of the stream are not applied here yet (as far as the node knows).
    var lag: UInt64
    /// `peer` (every node takes writes), `catching-up`, `disconnected` or `diverged`.
    var role: String
}
