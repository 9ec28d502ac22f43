import Dispatch
import Foundation
import HeapModule
import Synchronization
import LiveBindEngine

/// Calls back with the streams whose credential expired, at their expiry: one timer for all streams,
/// set for the earliest expiry.
///
/// Streams that close first are forgotten; their entries stay in the heap until they come up, or
/// until the heap holds more than twice the live entries, when it is rebuilt: its size stays within
/// twice the open streams (plus a constant), however many streams come and go.
///
/// Dispatch rather than a Swift `Task`, like the heartbeat: nothing the app does with the cooperative
/// pool may hold an expiry back.
final class StreamExpiry: @unchecked Sendable {  // the Dispatch timer may be set from any thread; the rest is behind `state`
    private struct Entry: Comparable {
        let deadline: Date
        let id: Int
        static func < (a: Entry, b: Entry) -> Bool { (a.deadline, a.id) < (b.deadline, b.id) }
    }

    private struct State {
        var heap = Heap<Entry>()
        var live: [Int: Date] = [:]
        var armedFor: Date?
        var expire: (@Sendable ([Int]) -> Void)?
        var cancelled = false
    }

    private let queue = DispatchQueue(label: "livebind.stream-expiry")
    private let timer: DispatchSourceTimer
    private let state = OrderedMutex(State())

    init() {
        timer = DispatchSource.makeTimerSource(queue: queue)
    }

    /// Starts the timer; `expire` gets the ids whose deadline passed, on the timer's queue.
    func start(_ expire: @escaping @Sendable ([Int]) -> Void) {
        state.withLock { $0.expire = expire }
        timer.setEventHandler { [weak self] in self?.fire() }
        timer.schedule(deadline: .distantFuture)
        timer.resume()
    }

    /// Stream `id` expires at `deadline`.
    func add(_ id: Int, at deadline: Date) {
        state.withLock { state in
            guard !state.cancelled else { return }
            state.live[id] = deadline
            state.heap.insert(Entry(deadline: deadline, id: id))
            if state.heap.count > 2 * state.live.count + 1024 {
                state.heap = Heap(state.live.map { Entry(deadline: $0.value, id: $0.key) })
            }
            guard state.armedFor.map({ deadline < $0 }) ?? true else { return }
            state.armedFor = deadline
            // Set while locked, so that the timer always ends set for the earliest deadline.
            arm(for: deadline)
        }
    }

    /// Stream `id` closed: it needs no expiry.
    func forget(_ id: Int) {
        state.withLock { _ = $0.live.removeValue(forKey: id) }
    }

    /// Entries in the heap, live or left by streams that closed (for tests of its bound).
    var heldEntries: Int { state.withLock { $0.heap.count } }

    /// Stops the timer; safe to call more than once.
    func cancel() {
        state.withLock { $0.cancelled = true }
        timer.cancel()
    }

    deinit { timer.cancel() }

    private func arm(for deadline: Date) {
        let seconds = max(0, deadline.timeIntervalSinceNow)
        timer.schedule(deadline: .now() + .nanoseconds(Int(min(seconds, 86_400 * 365) * 1e9)), leeway: .milliseconds(5))
    }

    private func fire() {
        let now = Date()
        let (due, expire): ([Int], (@Sendable ([Int]) -> Void)?) = state.withLock { state in
            var due: [Int] = []
            while let first = state.heap.min, first.deadline <= now {
                state.heap.removeMin()
                if state.live[first.id] == first.deadline {
                    state.live[first.id] = nil
                    due.append(first.id)
                }
            }
            state.armedFor = state.heap.min?.deadline
            if let next = state.armedFor { arm(for: next) } else { timer.schedule(deadline: .distantFuture) }
            return (due, state.cancelled ? nil : state.expire)
        }
        if !due.isEmpty { expire?(due) }
    }
}
