import Foundation
import Logging
import Synchronization
import LiveBindEngine

/// One node of a cluster: the store's commit log on a NATS JetStream stream that every node writes to
/// and follows. The stream's order is the one order: every node applies its messages in it.
///
/// Writes take turns on one thread (the *turn thread*). A turn applies every message the stream
/// delivered so far, runs the writes queued since the last turn against that state (so `If-Match` and
/// JSON Patch `test` see the state the writes are ordered after), and publishes the commits they made,
/// with what their bindings derived, as one message (`CommitMessage`: group commit) with
/// `Nats-Expected-Last-Sequence` set to the last message applied: the stream stores it only if nothing
/// came in between. Once stored the commits are durable, and the writes are answered. When another
/// node came first, the commits are rolled back, the node applies what came in, and the writes run
/// again. A message is applied by every node entirely or not at all: a write and its bindings' commits
/// are never split. Event ids are the store's sequences, numbered on from message to message; a
/// message names its first. Swift writes made outside a request that the stream refused are applied
/// again on the new state by a turn of their own (`keepRefused`, `redo`). Messages of other nodes
/// arrive through an ordered consumer (a second thread) and are replayed on the turn thread without
/// running bindings.
///
/// Publishes that get no answer (an election, a lost server) are retried with the same
/// `Nats-Msg-Id`, which the stream deduplicates, until ``ClusterConfiguration/writeTimeout``; then the
/// writes get ``ClusterError/unavailable(_:)`` (a 503). A node without a connection refuses writes at once.
final class ClusterNode: CommitLog, @unchecked Sendable {
    // `@unchecked`: the fields under the turn thread's lock are only touched with it held;
    // `messageCounter` and the other fields marked so only by the turn thread.
    let configuration: ClusterConfiguration
    let nats: NATSConnection
    let logger: Logger
    /// Where commits are published: `<stream>.commits`.
    let subject: String
    /// The last stream sequence (message) applied to the store.
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
        /// Whether the write changes the bindings: it runs in a turn of its own (its change is a
        /// message of its own, before its commits).
        let alone: Bool
        /// Told once: nil when the commits are in the stream and applied (or the write made none).
        let done: @Sendable (ClusterError?) -> Void
        /// How often it was put back in the queue because commits made outside it did not fit beside it.
        var setAside = 0
    }

    /// What the consumer delivered: the stream's message `sequence` with commits (`numbered`: it names
    /// its first event id, which follows the last one applied; else a message of 0.1, one commit whose
    /// event id is the stream sequence), or a change to the bindings made over HTTP (with the
    /// idempotency tag of the request that made it, if any).
    enum Delivered: Sendable {
        case commits(sequence: UInt64, [Commit], numbered: Bool, node: String?)
        case binding(sequence: UInt64, ClusterBindingChange, tag: String?)

        var sequence: UInt64 {
            switch self {
            case .commits(let sequence, _, _, _): sequence
            case .binding(let sequence, _, _): sequence
            }
        }
    }

    /// The turn thread; its lock guards `inbox`, `jobs`, `appended`, `inTurn` and `store`.
    let turns = WorkerThread(named: "lb-cluster-turn")
    /// The thread reading the stream's ordered consumer into `inbox`.
    let reader = WorkerThread(named: "lb-cluster-read")
    /// Told when `applied` moves, for ``start()`` and ``waitUntilApplied(through:timeout:)``.
    let appliedMoved = WaitSignal()
    var inbox: [Delivered] = []
    var jobs: [Job] = []
    /// Commits the store made and that are not in the stream (nor rolled back) yet, in order.
    var appended: [Commit] = []
    /// The sequences of those made outside the turn's writes (Swift writes, what `redo` made, what
    /// other threads' bindings derived): made again when the stream refuses them.
    var madeOutside = Set<UInt64>()
    var inTurn = false
    weak var store: Store?
    /// Turn thread only: numbers this node's messages for their `Nats-Msg-Id`.
    var messageCounter: UInt64 = 0
    /// Turn thread only: the current turn's deadline, and whether its write must run again (a
    /// binding change lost the race for the stream).
    var turnDeadline = ContinuousClock.now
    var runAgain: Rerun?
    /// Turn thread only: whether the current write put a binding change in the stream (it must not
    /// run again then).
    var changedBindings = false
    /// Turn thread only: whether the turn's writes are running (what they commit is theirs).
    var runningJobs = false
    /// Turn thread only: the node whose commits came last in the stream, and when each node's last
    /// came (for the turn order, `waitForTurn`).
    var lastWriter: String?
    var writers: [String: ContinuousClock.Instant] = [:]
    enum Rerun { case now, afterDelivery }
    /// Turn thread only: commits of this node the stream refused (another node's commit took their
    /// sequence) that are made again by a turn of their own on the new state: Swift writes made outside
    /// a turn (`toRebase`, applied again) and bindings' derived commits (`toCatchUp`: their bindings
    /// catch up), until `redoDeadline`.
    var toRebase: [Commit] = []
    var toCatchUp: [Commit] = []
    var redoDeadline: ContinuousClock.Instant?
    /// Swift writes given up (no longer applying after a rebase, or out of time), for `/metrics`.
    let droppedWrites = Atomic<Int>(0)
    /// Catches up the bindings whose derived commits the stream refused (set by the server).
    let catchUpHandler = OrderedMutex<(@Sendable ([Commit]) -> Void)?>(nil)
    /// Turn thread only: the bindings made over HTTP, as the stream left them (for snapshots).
    var httpBindings: [(id: String, definition: JSON, enabled: Bool)] = []
    /// Learns the receipts of idempotent writes from commits applied here (set by the server).
    let receiptHandler = OrderedMutex<(@Sendable (CommitReceipt) -> Void)?>(nil)
    /// The receipts of idempotent writes through an event id and a stream sequence, for snapshots
    /// (set by the server): those of commits, and those of binding changes as the server encodes them.
    let receiptSource = OrderedMutex<(@Sendable (UInt64, UInt64) -> (commits: [CommitReceipt], answers: [JSON]))?>(nil)
    /// Applies another node's binding change to this node's registry (set by the server), with the
    /// idempotency tag of the request that made it and the stream's message that carried it.
    let bindingHandler = OrderedMutex<(@Sendable (ClusterBindingChange, _ tag: String?, _ sequence: UInt64) -> Void)?>(nil)
    /// Turn thread only (and `loadSnapshot` before it starts): the last snapshot interval taken.
    var snapshotRound: UInt64 = 0
    /// Encodes and publishes snapshots, so that no write waits for them.
    let snapshotQueue = DispatchQueue(label: "livebind-cluster-snapshots")
    /// Snapshots published, for `/metrics`.
    let snapshotsTaken = Atomic<Int>(0)
    /// Whether a snapshot is being encoded or stored (on the snapshot queue).
    let snapshotting = Atomic<Bool>(false)
    /// Turn thread only: the sequence each model last changed at, since this node started (a model
    /// missing changed before the snapshot it loaded), for the next snapshot to keep what did not change.
    var changedAt: [String: UInt64] = [:]
    let bootID = UInt64.random(in: 1...UInt64.max)

    /// Connects to the cluster's NATS servers and makes the stream when missing. Nothing is read
    /// until ``start(store:)``.
    init(configuration: ClusterConfiguration, logger: Logger) throws(ClusterError) {
        self.configuration = configuration
        self.logger = logger
        subject = configuration.stream + ".commits"
        nats = try NATSConnection(servers: configuration.servers, name: "livebind " + configuration.nodeName)
        let last = try Self.retrying(until: .now + configuration.startTimeout) { () throws(ClusterError) -> UInt64 in
            let last = try nats.ensureStream(
                configuration.stream, subjects: [configuration.stream + ".>"],
                replicas: configuration.replicas,
                maxMessages: configuration.maxCommits > 0 ? Int64(configuration.maxCommits) : -1,
                maxBytes: -1)
            if configuration.snapshotInterval > 0 {
                // Unbounded by count: a snapshot is many chunks, and older ones are purged once a newer
                // one is stored (a stream made by 0.1.0 kept four whole snapshots).
                _ = try nats.ensureStream(
                    configuration.snapshotStream, subjects: [configuration.snapshotStream + ".>"],
                    replicas: configuration.replicas, maxMessages: -1, maxBytes: -1)
                try nats.removeMessageLimit(configuration.snapshotStream)
            }
            return last
        }
        streamLast.store(last, ordering: .relaxed)
    }

    /// Retries `body` while it throws, every 250 ms, until `deadline` (a stream being elected at start).
    static func retrying<T>(until deadline: ContinuousClock.Instant, _ body: () throws(ClusterError) -> T)
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
        turns.withLock { self.store = store }
    }

    /// Keeps `commit` for the current turn (or a turn of its own when no write is running).
    func append(_ commit: Commit) {
        let outside = !(turns.isCurrent && runningJobs)
        turns.withLock {
            appended.append(commit)
            if outside { madeOutside.insert(commit.sequence) }
        }
        turns.signal()
    }

    /// Keeps `commits` for the current turn as one unit: a turn publishes them in one message.
    func append(contentsOf commits: [Commit]) {
        let outside = !(turns.isCurrent && runningJobs)
        turns.withLock {
            appended += commits
            if outside { madeOutside.formUnion(commits.map(\.sequence)) }
        }
        turns.signal()
    }

    /// Waits (up to the write timeout and a second) until no write is queued or running.
    func flush() {
        let deadline = ContinuousClock.now + configuration.writeTimeout + .seconds(1)
        turns.withLock {
            while (inTurn || !jobs.isEmpty || !appended.isEmpty) && !turns.isStopping {
                if !turns.wait(until: deadline) { break }
            }
        }
    }

    // MARK: Running

    /// Starts following the stream from its beginning and taking turns; returns once the store holds
    /// every commit the stream had at start (throws when that takes longer than the start timeout).
    func start() throws(ClusterError) {
        // The bindings made over HTTP that the snapshot holds, before the commits after it.
        if let handler = bindingHandler.withLock({ $0 }) {
            for binding in httpBindings {
                handler(.create(id: binding.id, definition: binding.definition), nil, 0)
                if !binding.enabled { handler(.setEnabled(id: binding.id, enabled: false), nil, 0) }
            }
        }
        let subscription = try Self.retrying(until: .now + configuration.startTimeout) { () throws(ClusterError) -> NATSSubscription in
            try NATSSubscription(
                nats, stream: configuration.stream, subject: configuration.stream + ".>",
                startSequence: applied.load(ordering: .relaxed) + 1)
        }
        reader.start { [self] in read(subscription) }
        turns.start { [self] in takeTurns() }
        let target = streamLast.load(ordering: .relaxed)
        let loaded = appliedMoved.wait(until: .now + configuration.startTimeout) {
            applied.load(ordering: .acquiring) >= target || divergence.withLock({ $0 }) != nil
        }
        if let reason = divergence.withLock({ $0 }) { throw .diverged(reason) }
        if !loaded {
            throw .unavailable("loaded \(applied.load(ordering: .relaxed)) of \(target) commits in time")
        }
        logger.info("cluster: node \(configuration.nodeName) applied the stream \(configuration.stream) through \(target)")
    }

    /// Stops both threads once the current turn is over (writes still queued get 503), waits for a
    /// snapshot being published, and closes the connection. Safe to call twice.
    func stop() {
        turns.stop()
        reader.stop()
        let waiting = turns.withLock { () -> [Job] in
            defer { jobs.removeAll() }
            return jobs
        }
        for job in waiting { job.done(.unavailable("the server is stopping")) }
        snapshotQueue.sync {}
        nats.close()
    }

    /// Runs `write` in this node's next turn (with the other writes queued by then; `alone`: by itself,
    /// for a write that changes the bindings); `done` is told when its commits are applied or why not.
    func submit(alone: Bool = false, _ write: @escaping @Sendable () -> Void, done: @escaping @Sendable (ClusterError?) -> Void) {
        if let reason = divergence.withLock({ $0 }) { return done(.diverged(reason)) }
        guard nats.isConnected else {
            refusedWrites.add(1, ordering: .relaxed)
            return done(.unavailable("this node has no connection to NATS"))
        }
        let accepted = turns.withLock { () -> Bool in
            guard !turns.isStopping else { return false }
            jobs.append(Job(write: write, alone: alone, done: done))
            return true
        }
        if accepted { turns.signal() }
        if !accepted { done(.unavailable("the server is stopping")) }
    }

    // MARK: The reading thread

    func read(_ subscription: NATSSubscription) {
        let names =
            CommitMessage.headerNames + [
                ClusterBindingChange.operationHeader, ClusterBindingChange.idHeader,
                ClusterBindingChange.tagHeader
            ]
        while !reader.withLock({ reader.isStopping }) {
            guard let message = subscription.next(timeout: 250, headers: names) else { continue }
            let last = message.sequence + message.pending
            if streamLast.load(ordering: .relaxed) < last { streamLast.store(last, ordering: .relaxed) }
            let delivered: Delivered
            if message.subject == bindingSubject {
                guard let change = ClusterBindingChange(message: message) else {
                    diverge("message \(message.sequence) is no binding change this code reads")
                    return
                }
                delivered = .binding(sequence: message.sequence, change, tag: message.headers[ClusterBindingChange.tagHeader])
            } else {
                do {
                    delivered = .commits(
                        sequence: message.sequence, try CommitMessage.commits(in: message),
                        numbered: message.headers[CommitMessage.sequenceHeader] != nil,
                        node: message.headers[CommitMessage.nodeHeader])
                } catch {
                    diverge(error.description)
                    return
                }
            }
            turns.withLock { inbox.append(delivered) }
            turns.signal()
        }
    }

    func diverge(_ reason: String) {
        logger.error("cluster: \(reason); this node takes no more writes")
        divergence.withLock { $0 = $0 ?? reason }
        appliedMoved.notify()
    }

    /// Records that the store applied the stream through `sequence`, and wakes who waits for it.
    func markApplied(_ sequence: UInt64) {
        applied.store(sequence, ordering: .releasing)
        appliedMoved.notify()
    }

    /// Returns once the store applied event `id`, once it applied every message the stream has
    /// without reaching it (no node made it), or after `timeout`.
    func waitUntilApplied(event id: UInt64, timeout: Duration) {
        guard let store = turns.withLock({ store }) else { return }
        _ = appliedMoved.wait(until: .now + timeout) {
            store.visibleSequence >= id || applied.load(ordering: .acquiring) >= streamLast.load(ordering: .relaxed)
        }
    }

    // MARK: Status

    /// What `/healthz` and `/metrics` show.
    var status: ClusterStatus {
        let applied = applied.load(ordering: .relaxed), last = streamLast.load(ordering: .relaxed)
        let event = turns.withLock { store }?.visibleSequence ?? 0
        let connected = nats.isConnected
        let diverged = divergence.withLock { $0 }
        let role = diverged != nil ? "diverged" : !connected ? "disconnected" : last > applied ? "catching-up" : "peer"
        return ClusterStatus(
            node: configuration.nodeName, connected: connected && diverged == nil, applied: event,
            lag: last > applied ? last - applied : 0, role: role)
    }
}

/// A cluster node's state as `/healthz` and `/metrics` show it.
struct ClusterStatus: Sendable {
    var node: String
    /// Whether the node can take writes: connected to NATS and following the stream.
    var connected: Bool
    /// The last event id applied here.
    var applied: UInt64
    /// How many messages of the stream are not applied here yet (as far as the node knows).
    var lag: UInt64
    /// `peer` (every node takes writes), `catching-up`, `disconnected` or `diverged`.
    var role: String
}
