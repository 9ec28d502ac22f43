import Foundation

/// Carries durable commits to the event hub on a thread of its own, so that no writer waits for a
/// commit's frame to be encoded or for the streams it wakes.
///
/// Writers (or the commit log's thread) only queue the commits; the feed's thread encodes each one's
/// frame and publishes everything queued at once, in sequence order, waking each stream once.
///
/// After a round that woke many streams it pauses a little, about what sending to them costs the
/// worker threads, while further commits gather: under a stream of writes each wake-up then carries
/// several events, and the fan-out takes a share of the CPU instead of all of it, so writes are still
/// answered promptly. A quiet server sends each event at once.
final class EventFeed: @unchecked Sendable {
    // `@unchecked`: `queue` and `stopped` are only touched with `condition` locked.
    private let hub: EventHub
    private let condition = NSCondition()
    private var queue: [Commit] = []
    private var stopped = false
    /// The pause after a round, in microseconds per stream it woke; and the longest pause.
    static let pausePerStream = 4
    static let longestPause = 10_000

    /// Starts the feed's thread.
    init(hub: EventHub) {
        self.hub = hub
        let thread = Thread { [self] in run() }
        thread.name = "livebind-event-feed"
        thread.start()
    }

    /// Queues durable commits, in sequence order.
    func publish(_ commits: [Commit]) {
        condition.lock()
        if !stopped {
            let wasEmpty = queue.isEmpty
            queue += commits
            // The thread sleeps only on an empty queue.
            if wasEmpty { condition.signal() }
        }
        condition.unlock()
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
            while queue.isEmpty && !stopped { condition.wait() }
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
