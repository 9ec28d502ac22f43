import Foundation

/// Carries durable commits to the event hub on a thread of its own, so that no writer waits for a
/// commit's frame to be encoded or for the streams it wakes.
///
/// Writers (or the commit log's thread) only queue the commits; the feed's thread encodes each one's
/// frame and publishes everything queued at once, in sequence order, waking each stream once.
///
/// Waking the thread costs a writer a system call and the server two context switches, about as much
/// as the rest of a small write, so the thread is woken only when it sleeps on an empty queue, and
/// then spends no more wake-ups than it needs:
/// - While no stream is open, nobody can see a commit yet, so it gathers commits for up to
///   `gatherInterval` (a write after a stream opened, a full queue, or `stop` cut that short) and
///   publishes them in one round: the retained history, which a stream resuming with
///   `Last-Event-ID` reads, is then complete within that interval, and a stream that opens meanwhile
///   starts from a snapshot that already holds the commits, or gets them at the end of the interval.
/// - After a round that woke many streams it pauses a little, about what sending to them costs the
///   worker threads, while further commits gather: under a stream of writes each wake-up then carries
///   several events, and the fan-out takes a share of the CPU instead of all of it, so writes are
///   still answered promptly. A quiet server sends each event at once.
final class EventFeed: @unchecked Sendable {
    // `@unchecked`: `queue`, `stopped`, `sleeping` and `gathering` are only touched with `condition` locked.
    private let hub: EventHub
    private let condition = NSCondition()
    private var queue: [Commit] = []
    private var stopped = false
    /// The thread waits for a commit: the next one must wake it.
    private var sleeping = false
    /// The thread gathers commits no stream can see yet; a write that finds a stream open (or the
    /// queue full) wakes it.
    private var gathering = false
    /// The pause after a round, in microseconds per stream it woke; and the longest pause.
    static let pausePerStream = 4
    static let longestPause = 10_000
    /// How long commits gather while no stream is open, in seconds, and how many at most.
    static let gatherInterval = 0.002
    static let gatherLimit = 1024

    /// Starts the feed's thread.
    init(hub: EventHub) {
        self.hub = hub
        let thread = Thread(named: "lb-event-feed") { [self] in run() }
        thread.start()
    }

    /// Queues durable commits, in sequence order.
    func publish(_ commits: [Commit]) {
        condition.lock()
        guard !stopped else { return condition.unlock() }
        queue += commits
        let wake = sleeping
            || gathering && (queue.count >= Self.gatherLimit || hub.openStreams.load(ordering: .relaxed) > 0)
        if wake { (sleeping, gathering) = (false, false) }
        condition.unlock()
        // Signalled after unlocking, so that the woken thread does not block on the lock right away.
        if wake { condition.signal() }
    }

    /// Publishes what is queued, then ends the thread (without waiting for it).
    func stop() {
        condition.withLock {
            stopped = true
            condition.signal()
        }
    }

    private func run() {
        var batch: [Commit] = []
        while true {
            condition.lock()
            while queue.isEmpty && !stopped {
                sleeping = true
                condition.wait()
            }
            sleeping = false
            if !stopped && queue.count < Self.gatherLimit && hub.openStreams.load(ordering: .relaxed) == 0 {
                gathering = true
                let deadline = Date(timeIntervalSinceNow: Self.gatherInterval)
                while gathering && !stopped && condition.wait(until: deadline) {}
                gathering = false
            }
            if queue.isEmpty {
                condition.unlock()
                return
            }
            swap(&batch, &queue)
            condition.unlock()
            let woken = hub.publish(batch.map(EventEncoder.frame(for:)), commits: batch)
            batch.removeAll(keepingCapacity: true)
            if woken > 16 { usleep(UInt32(min(Self.pausePerStream * woken, Self.longestPause))) }
        }
    }
}
