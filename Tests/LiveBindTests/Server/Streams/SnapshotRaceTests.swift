import Foundation
import Synchronization
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// Holds back the event log's append of one commit, through the hub's test seam, until released.
final class AppendGate: Sendable {
    /// Signalled when the held commit reaches the hub (and waits there).
    let reached = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)
    private let heldSequence = Atomic<UInt64>(0)

    /// Holds the commit with sequence `sequence` when it comes.
    func hold(_ sequence: UInt64) { heldSequence.store(sequence, ordering: .releasing) }

    /// Lets the held commit on into the log.
    func release() { released.signal() }

    /// The seam itself: runs on the thread delivering the commit, before the hub appends it.
    func beforeAppend(_ frame: EventFrame) {
        guard frame.isCommit, frame.sequence != 0,
            heldSequence.compareExchange(expected: frame.sequence, desired: 0, ordering: .acquiringAndReleasing).exchanged
        else { return }
        reached.signal()
        _ = released.wait(timeout: .now() + 30)  // bounded, should the test fail before releasing it
    }
}

@Suite("A commit that reaches the log after a snapshot that has it") struct SnapshotRaceTests {
    /// A commit is in the store (and so in a new stream's snapshot) before it is in the event log:
    /// the stream that started from that snapshot must not get it again as an event, while a stream
    /// that started before it gets it exactly once.
    @Test func aStreamWhoseSnapshotIncludesACommitNotYetLoggedSeesEachChangeExactlyOnce() throws {
        let store = Store()
        try store.put("m", ["v": 0])
        let gate = AppendGate()
        try withRunningServer(store: store, configure: { $0.beforeEventAppend = gate.beforeAppend }) { port in
            let early = try TestEventStream(port: port)  // every model: no snapshot frame shared with `late`
            #expect(try early.next()?.type == "snapshot")

            let held = store.lastSequence + 1
            gate.hold(held)
            let writer = TestThread { try store.set(1, at: Path(pointer: "/v"), in: "m") }
            #expect(gate.reached.wait(timeout: .now() + 10) == .success, "the commit never reached the hub")

            // The commit is in the store but not yet in the log: the new stream's cut includes it.
            let late = try TestEventStream(port: port, target: "/events?model=m")
            let snapshot = try #require(try late.next())
            #expect(snapshot.type == "snapshot")
            #expect(snapshot.id == "\(held)")
            #expect((try snapshot.object()["value"] as? [String: Any])?["v"] as? Int == 1)

            gate.release()
            try writer.join(seconds: 10)
            try store.set(2, at: Path(pointer: "/v"), in: "m")

            let next = try #require(try late.next())
            #expect(next.type == "set")
            #expect(next.id == "\(held + 1)", "the commit already in the snapshot came again: \(next)")
            #expect(try next.object()["value"] as? Int == 2)

            let seenEarly = try early.next(2)
            #expect(seenEarly.map(\.id) == ["\(held)", "\(held + 1)"])
            #expect(try seenEarly.map { try $0.object()["value"] as? Int } == [1, 2])
        }
    }
}
