import Dispatch
import Synchronization
import LiveBindEngine
internal import LiveBindHTTP

/// The fan-out of store commits to event streams.
///
/// Each commit is encoded once into an `EventFrame` and appended to a log bounded in events and in
/// bytes; every subscriber has a cursor into the log. A subscriber with nothing to read is suspended
/// and resumed when a frame it wants arrives. A subscriber whose cursor fell off the log gets `resync`
/// and fresh snapshots. Streams starting at the same cut share one snapshot frame (`SharedSnapshots`),
/// and a stream whose client reads nothing while it holds more than `streamBufferLimit` bytes is cut.
///
/// > Important: `read` and `close` are called on libmicrohttpd worker threads; `publish` on the
/// thread delivering store commits. Connections are resumed only after the lock is released.
final class EventHub: Sendable {
    /// Limits and timing.
    struct Settings: Sendable {
        /// Most events in the log.
        var retainedEvents: Int
        /// Most bytes of events in the log; the newest event stays even when it alone is larger.
        var retainedBytes: Int = 64 << 20
        /// Most bytes of frames a stream may hold unsent while its client reads nothing (see `heartbeat`).
        var streamBufferLimit: Int = 1 << 20
        /// Most bytes of distinct frames all streams together may hold unsent (see `makeRoom`).
        var maxUnsentBytes: Int = 256 << 20
        var maxStreams: Int
        /// Most `sub` values on one stream.
        var maxSubscriptions: Int = 64
        /// Most rows in one window.
        var maxWindow: Int = 10_000
        /// Most distinct views shown at once.
        var maxViews: Int = 256
        /// Most elements all views arrange together.
        var maxViewRows: Int = 1_000_000
        /// The bounds of a view's query (`--max-view-terms`, `--max-view-in`, `--max-view-query-bytes`).
        var viewLimits = ViewQuery.Limits()
        var retryMilliseconds: Int = 2000
        /// Heartbeat rounds (two per interval) between the two checks that must find an idle stream's
        /// socket holding unacknowledged bytes before the stream is cut: at least two, and at least two
        /// seconds' worth, so that delayed acknowledgements never cut a live peer under a short `--heartbeat`.
        var silentPeerRounds = 2
        /// A test seam: called with each frame before `publish` appends it, outside the lock, on the
        /// thread delivering commits. Nil (one branch per event) except in tests that hold an append back.
        var beforeAppend: (@Sendable (EventFrame) -> Void)?
        /// A test seam: called while a stream's new views are arranged, outside the lock (see
        /// `arrangeViews`). Nil except in tests that write meanwhile.
        var whileArranging: (@Sendable () -> Void)?
        /// A test seam: called on the arranging queue before a view whose array was replaced is arranged
        /// again, outside the lock (see `EventHub+Rearranging`). Nil except in tests that write meanwhile.
        var whileRearranging: (@Sendable () -> Void)?
    }

    /// Everything mutable, behind one lock.
    ///
    /// Its parts (`EventLog`, `UnsentBudget`, `ViewCensus`, each `Subscriber`, `SuspendedStreams`,
    /// the shared snapshots, the mirrors, `EventHubMetrics`) have no lock of their own: they are read
    /// and changed only inside `state.withLock`, in place (through `inout`), so one critical section
    /// sees and changes them together (the order of events depends on it).
    struct State {
        /// The frames every stream reads from, and the sequences they cover.
        var log: EventLog
        /// What streams hold unsent, estimated, and what is reserved for frames being made.
        var budget: UnsentBudget
        /// The views the mirrors hold and those being arranged, against `--max-views` and `--max-view-rows`.
        var views: ViewCensus
        /// The snapshot frames streams start from, shared while they are still a good start.
        var snapshots = SharedSnapshots()
        /// The snapshot frames of locations and windows, shared while some stream holds them.
        var locationSnapshots = LocationSnapshots()
        var subscribers: [Int: Subscriber] = [:]
        /// The models streams subscribe to locations in, as published so far.
        var mirrors: [String: ModelMirror] = [:]
        /// Streams with `sub` values, by their `stream` id.
        var streams: [String: Int] = [:]
        var suspended = SuspendedStreams()
        /// Suspended streams whose next own frame waits for the log to reach its sequence, by stream.
        var awaiting: [Int: UInt64] = [:]
        /// Heartbeat ticks so far (two per heartbeat interval).
        var heartbeatRound = 0
        var nextID = 0
        var shuttingDown = false
        var metrics = EventHubMetrics()
    }

    let store: Store
    let settings: Settings
    let state: OrderedMutex<State>
    /// The `retry:` line every stream starts with.
    let retryFrame: EventFrame
    /// Ends streams whose credential expires (`auth_revoked`).
    let expiry: StreamExpiry
    /// How many streams are open, as `state.subscribers` has it (written under the lock): the event
    /// feed reads it without the lock to tell whether anyone can see a commit yet.
    let openStreams = Atomic<Int>(0)
    /// Told when a stream closes, for ``shutdown(deadline:)``.
    let streamsClosed = WaitSignal()
    /// Where views whose array was replaced by a long one are arranged again, one at a time, outside
    /// the lock (see `EventHub+Rearranging`).
    let arranging = DispatchQueue(label: "livebind.view-arranging")

    init(store: Store, settings: Settings) {
        self.store = store
        self.settings = settings
        retryFrame = EventFrame(
            sequence: 0, model: nil, isCommit: false,
            bytes: EventEncoder.retry(milliseconds: settings.retryMilliseconds))
        let start = store.visibleSequence
        state = OrderedMutex(
            State(
                log: EventLog(
                    start: start, retainedEvents: settings.retainedEvents,
                    retainedBytes: settings.retainedBytes),
                budget: UnsentBudget(limit: settings.maxUnsentBytes),
                views: ViewCensus(maxViews: settings.maxViews, maxViewRows: settings.maxViewRows)))
        expiry = StreamExpiry()
        expiry.start { [weak self] ids in self?.revoke(ids, reason: "expired") }
    }

    /// Appends a frame to the log and wakes the suspended subscribers that want it.
    func publish(_ frame: EventFrame) {
        publish(CollectionOfOne(frame))
    }

    /// Appends frames to the log, in order, then wakes the suspended subscribers that want any of them,
    /// each once. Returns how many it woke.
    ///
    /// `commits`, when given, are the commits the frames were encoded from (one each, in order): the
    /// streams with locations in their models get their own events from them.
    @discardableResult
    func publish(_ frames: some Collection<EventFrame>, commits: [Commit]? = nil) -> Int {
        if let beforeAppend = settings.beforeAppend { for frame in frames { beforeAppend(frame) } }
        // What location streams' mirrors let go of: freed once the lock is released (see `deliver`).
        var released: [JSON] = []
        let wake: [any HTTPStreamConnection] = state.withLock { state in
            var wake: [any HTTPStreamConnection] = []
            for (position, frame) in frames.enumerated() {
                // A commit already in the log (seeded from the data directory's history) is not added twice.
                guard state.log.append(frame) else { continue }
                if frame.isCommit { state.metrics.eventsPublished += 1 }
                for id in state.suspended.removeWoken(byModel: frame.model) {
                    guard let subscriber = state.subscribers[id] else { continue }
                    subscriber.wake(skippingTo: state.log.endPosition - 1)  // the frame just appended woke it
                    if let connection = subscriber.connection { wake.append(connection) }
                }
                // One branch per event for servers without location streams.
                if !state.mirrors.isEmpty, let commits, state.mirrors[commits[position].model] != nil {
                    deliver(commits[position], logFrame: frame, in: &state, waking: &wake, releasing: &released)
                }
                if !state.awaiting.isEmpty, frame.isCommit { wakeAwaiting(through: frame.sequence, in: &state, into: &wake) }
            }
            return wake
        }
        for connection in wake { connection.resume() }
        released.removeAll()
        return wake.count
    }

    /// Puts commits made before this hub existed in front of its log, so clients resume across a
    /// restart with `Last-Event-ID`: `history` is every commit of the sequences it spans, oldest
    /// first, through `through` (sequences that are no commit — a cluster's binding changes — have
    /// none; nil: through its last), read after the hub's feed was registered: the data directory's
    /// event log, or a cluster stream's last commits.
    ///
    /// Frames the feed already published are kept and not duplicated; the history is used only when it
    /// joins them without a gap. Call before any stream subscribes.
    func seed(history: [EventFrame], through: UInt64? = nil) {
        state.withLock { state in
            precondition(state.subscribers.isEmpty, "seed the event log before streams subscribe")
            state.log.seed(history, through: through)
        }
    }

    /// Removes a subscriber (its response is finished or its client went away).
    func close(_ id: Int) {
        // The views it was the last to show: freed once the lock is released (a node per element).
        let dropped = state.withLock { state in
            let dropped = state.subscribers.removeValue(forKey: id).map { detach(id, $0, in: &state) } ?? []
            state.suspended.remove(id)
            state.awaiting[id] = nil
            openStreams.store(state.subscribers.count, ordering: .releasing)
            return dropped
        }
        withExtendedLifetime(dropped) {}
        streamsClosed.notify()
        expiry.forget(id)
    }

    /// Open streams, events published and the other counters `/metrics` reports.
    var metrics: EventHubMetrics {
        state.withLock { state in
            var metrics = state.metrics
            metrics.openStreams = state.subscribers.count
            metrics.retainedEvents = state.log.frames.count
            metrics.retainedBytes = state.log.bytes
            metrics.locationStreams = state.streams.count
            metrics.mirroredModels = state.mirrors.count
            // Replays not yet sent and snapshots being made are held too (charged to the budget).
            metrics.unsentBytes = unsentBytes(in: state) + state.budget.reserved
            return metrics
        }
    }
}
