import Foundation
import Synchronization

/// A live copy of a server's models, locations, windows or views in a local ``Store``, kept equal to
/// the server's: snapshots, then every change applied as the engine's own changes (so observers,
/// bindings, `@Observable` adapters and aggregates on the store work unchanged on remote data). Local
/// writes to a mirrored model or location go back to the server.
///
/// - **Stream.** One `GET /events` with `model=` and `sub=`; events that belong together (one id) are
///   applied together. A dropped connection is made again with `Last-Event-ID`: exactly the events
///   missed; `resync` starts over from fresh snapshots. A stream that sends no line (not even a heartbeat)
///   for two heartbeats is dropped, measured as bytes arrive, not as the application's tasks read them.
///   Reconnects back off from 0.2 s to 10 s with ±50 % jitter. A refusal of the stream itself (400,
///   401, 403, 404, 422) stops the mirror (``Status/error``).
/// - **Writes.** A commit the application makes in the store, inside a mirrored model or location,
///   becomes one HTTP write (a `PUT` of a set value, else a JSON Patch), sent in order with an
///   `Idempotency-Key` and, inside a whole model, `If-Match` with the revision it was made against. It
///   shows at once (optimistic); a refusal puts the server's value back and is reported to
///   `onRefusal` (``set(_:at:ifMatch:)`` throws it). While a write is unanswered, the stream's changes
///   to that model wait in a second copy (the server's as the stream tells it) and are applied when it
///   is answered, so a write is never applied twice nor lost under remote changes. With a queue file,
///   a write the server cannot get now waits in it and is sent when the stream connects again.
/// - **Windows and views** are read-only: a local write there is put back and reported.
/// - **Cost.** The mirror keeps that second copy of what it mirrors (memory twice its size).
public final class ServerMirror: Sendable {
    /// What it mirrors, as given.
    public let targets: [MirrorTarget]
    /// The store it keeps.
    public let store: Store
    let client: LiveBindClient
    let heartbeat: Duration
    let maxEventBytes: Int
    let onRefusal: (@Sendable (LiveBindClientError) -> Void)?
    /// The server's documents as the stream tells them, in the local layout.
    let shadow = Store(limits: ServerMirror.unlimited)
    let state = OrderedMutex(MirrorState())
    /// Held while applying to the stores, so the stream and a write's answer do not interleave there.
    let applying = OrderedMutex(())
    let wake: AsyncStream<Void>.Continuation
    private let wakeups: AsyncStream<Void>
    private let tasks = OrderedMutex<[Task<Void, Never>]>([])
    private let observation = OrderedMutex<ObservationToken?>(nil)

    /// What the status counts.
    public struct Status: Sendable {
        /// Whether it holds a snapshot of every target.
        public var isSynced: Bool
        /// Streams opened (answered 200).
        public var connections: Int
        /// Streams that ended and were made again.
        public var reconnects: Int
        /// Times the server said to start over (`resync`).
        public var resyncs: Int
        /// The refusal that stopped the mirror, if one did.
        public var error: LiveBindClientError?
    }

    /// The window a window or view target shows (`offset`, and the array's length, or for a view how
    /// many elements match).
    public struct ArrayWindow: Sendable, Equatable {
        public var offset: Int
        public var length: Int
    }

    init(
        client: LiveBindClient, targets: [MirrorTarget], store: Store, heartbeat: Duration, maxEventBytes: Int,
        onRefusal: (@Sendable (LiveBindClientError) -> Void)?
    ) throws(LiveBindClientError) {
        var places: Set<String> = []
        for target in targets {
            guard places.insert(target.localModel + target.localPath.pointer).inserted else {
                throw .invalidTarget(
                    "\(target.sub): another target already goes to \(target.localModel)\(target.localPath.pointer); give it another place (into:)"
                )
            }
        }
        self.client = client
        self.targets = targets
        self.store = store
        self.heartbeat = heartbeat
        self.maxEventBytes = max(1024, maxEventBytes)
        self.onRefusal = onRefusal
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        observation.withLock {
            $0 = store.observeAll { [weak self] commit in self?.heard(commit) }
        }
        let stream = Task.detached { [weak self] in
            guard let self else { return }
            await self.run()
        }
        let writer = Task.detached { [weak self, wakeups] in
            for await _ in wakeups {
                guard let self else { return }
                await self.sendWrites()
            }
        }
        tasks.withLock { $0 = [stream, writer] }
    }

    deinit {
        observation.withLock { $0?.cancel() }
        for task in tasks.withLock({ $0 }) { task.cancel() }
    }

    /// The counts and the state of the stream.
    public var status: Status {
        state.withLock {
            Status(
                isSynced: $0.synced, connections: $0.connections, reconnects: $0.reconnects,
                resyncs: $0.resyncs, error: $0.error)
        }
    }

    /// Waits until the mirror holds a snapshot of every target (or it stopped); returns whether it does.
    public func waitUntilSynced(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let (synced, stopped) = state.withLock { ($0.synced, $0.error != nil || $0.closed) }
            if synced { return true }
            if stopped { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return state.withLock { $0.synced }
    }

    /// The model's revision on the server as the mirror last heard it, where `target` (a model, or
    /// a location inside a mirrored one) is mirrored; 0 when unknown.
    public func revision(of target: String) -> UInt64 {
        guard let (index, _) = try? place(of: target, writable: false) else { return 0 }
        return state.withLock { $0.revisions[index] ?? 0 }
    }

    /// The store's value of `target`: a model or location this mirror holds, or anything inside one,
    /// or a window or view target as written (its rows); nil when there is none.
    public func value(of target: String) -> JSON? {
        if let shown = targets.first(where: { $0.sub == target && $0.showsRows }) {
            return try? store.value(of: shown.localModel, at: shown.localPath)
        }
        guard let (index, path) = try? place(of: target, writable: false) else { return nil }
        return try? store.value(of: targets[index].localModel, at: path)
    }

    /// Where a window or view target is, as the server last said.
    public func window(of target: MirrorTarget) -> ArrayWindow? {
        guard let index = targets.firstIndex(of: target) else { return nil }
        return state.withLock { $0.windows[index] }
    }

    /// Starts over from fresh snapshots (a new stream without `Last-Event-ID`).
    public func refresh() {
        let connection = state.withLock { state -> Task<Bool, any Error>? in
            state.lastEventID = nil
            return state.connection
        }
        connection?.cancel()
    }

    /// Ends the stream and the writes. Writes waiting in the queue file stay there, and so do writes
    /// made but not sent yet (without a queue file they are rolled back and reported).
    public func close() async {
        let connection = state.withLock { state -> Task<Bool, any Error>? in
            state.closed = true
            return state.connection
        }
        observation.withLock { $0?.cancel() }
        connection?.cancel()
        wake.finish()
        let running = tasks.withLock { $0 }
        for task in running { task.cancel() }
        for task in running { await task.value }
        // Writes made but not sent yet wait in the queue file, or fail as the server's absence would.
        for write in state.withLock({ $0.pending.filter { $0.phase == .waiting } }) {
            if client.queue != nil {
                queue(write, ifMatch: write.ifMatch ? baseRevision(of: write) : nil)
            } else {
                _ = answered(key: write.key, .failure(.unreachable("the mirror was closed before the write was sent")))
            }
        }
        let waiting = state.withLock { state in
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiting { waiter.resume(returning: .failure(.unreachable("the mirror was closed"))) }
    }

    /// (the target holding `text`, the local path of it), for a model or a location inside a target.
    func place(of text: String, writable: Bool) throws(LiveBindClientError) -> (Int, Path) {
        let (model, path) = try MirrorTarget.split(text, in: text)
        for (index, target) in targets.enumerated() where target.model == model && target.path.isPrefix(of: path) {
            if target.showsRows {
                if writable { throw .invalidTarget("\(text): windows and views are read-only") }
                if path != target.path { continue }
            }
            return (index, Path(target.localPath.components + path.components.dropFirst(target.path.components.count)))
        }
        throw .invalidTarget("\(text) is not inside anything this mirror holds")
    }

    static let unlimited: StoreLimits = {
        var limits = StoreLimits()
        limits.maxModelBytes = Int.max / 4
        limits.maxStoreBytes = Int.max / 4
        return limits
    }()

    /// The origin of the commits the mirror makes itself: its store observer passes them over.
    static let ownOrigin = CommitOrigin(actor: "livebind-client:mirror", route: nil)
    /// The origin of the local change ``set(_:at:ifMatch:)`` makes, which sends its write itself.
    static let setOrigin = CommitOrigin(actor: "livebind-client:set", route: nil)
}

/// What a mirror knows, behind its lock.
struct MirrorState {
    var closed = false
    /// The task reading the open stream (cancelled to end it).
    var connection: Task<Bool, any Error>?
    var lastEventID: String?
    var streamID: String?
    var synced = false
    /// Targets that got their snapshot since the stream started or resynced.
    var heard: Set<Int> = []
    /// The server's revision of each target's model, as the stream last told it.
    var revisions: [Int: UInt64] = [:]
    var windows: [Int: ServerMirror.ArrayWindow] = [:]
    /// Where windows were moved to (their parameters for the next stream).
    var windowParameters: [Int: String] = [:]
    /// The id of the last group the stream applied.
    var lastAppliedID: UInt64 = 0
    var connections = 0
    var reconnects = 0
    var resyncs = 0
    var error: LiveBindClientError?
    /// Local writes not settled yet, in the order they were made.
    var pending: [PendingWrite] = []
    var nextWrite = 0
    var waiters: [Int: CheckedContinuation<Result<JSON?, LiveBindClientError>, Never>] = [:]
    /// Local models whose store copy lags the shadow (the stream's changes waited for a write).
    var behind: Set<String> = []
}
