import Foundation
import LiveBindEngine

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
    // `@unchecked`: `queue`, `sleeping` and `gathering` are only touched with the worker's lock held.
    private let hub: EventHub
    private let worker = WorkerThread(named: "lb-event-feed")
    private var queue: [Commit] = []
    /// The thread waits for a commit: the next one must wake it.
    private var sleeping = false
    /// The thread gathers commits no stream can see yet; a write that finds a stream open (or the
    /// queue full) wakes it.
    private var gathering = false
    /// The pause after a round, in microseconds per stream it woke; and the longest pause.
    static let pausePerStream = 4
    static let longestPause = 10_000
    /// How long commits gather while no stream is open, and how many at most.
    static let gatherInterval = Duration.milliseconds(2)
    static let gatherLimit = 1024

    /// Starts the feed's thread.
    init(hub: EventHub) {
        self.hub = hub
        worker.start { [self] in run() }
    }

    /// Queues durable commits, in sequence order.
    func publish(_ commits: [Commit]) {
        let wake = worker.withLock { () -> Bool in
            guard !worker.isStopping else { return false }
            queue += commits
            let wake =
                sleeping
                || gathering && (queue.count >= Self.gatherLimit || hub.openStreams.load(ordering: .relaxed) > 0)
            if wake { (sleeping, gathering) = (false, false) }
            return wake
        }
        // Signalled after unlocking, so that the woken thread does not block on the lock right away.
        if wake { worker.signal() }
    }

    /// Publishes what is queued, then ends the thread; returns once it has.
    func stop() {
        worker.stop()
    }

    private func run() {
        var batch: [Commit] = []
        while true {
            let more = worker.withLock { () -> Bool in
                while queue.isEmpty && !worker.isStopping {
                    sleeping = true
                    worker.wait()
                }
                sleeping = false
                if !worker.isStopping && queue.count < Self.gatherLimit && hub.openStreams.load(ordering: .relaxed) == 0 {
                    gathering = true
                    let deadline = ContinuousClock.now + Self.gatherInterval
                    while gathering && !worker.isStopping && worker.wait(until: deadline) {}
                    gathering = false
                }
                swap(&batch, &queue)
                return !batch.isEmpty
            }
            guard more else { return }
            let woken = hub.publish(batch.map(EventEncoder.frame(for:)), commits: batch)
            batch.removeAll(keepingCapacity: true)
            if woken > 16 { usleep(UInt32(min(Self.pausePerStream * woken, Self.longestPause))) }
        }
    }
}
