import Foundation
import Synchronization
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// The one timer that ends streams at their credential's expiry.
@Suite("Stream expiry") struct StreamExpiryTests {
    @Test func streamsExpireInDeadlineOrderAtTheirDeadline() throws {
        let expired = OrderedMutex<[(Int, Date)]>([])
        let expiry = StreamExpiry()
        expiry.start { ids in expired.withLock { list in for id in ids { list.append((id, Date())) } } }
        defer { expiry.cancel() }
        let start = Date()
        expiry.add(1, at: start.addingTimeInterval(0.6))
        expiry.add(2, at: start.addingTimeInterval(0.2))
        expiry.add(3, at: start.addingTimeInterval(0.4))
        expiry.add(4, at: start.addingTimeInterval(0.3))
        expiry.forget(4)  // closed first: never reported
        for _ in 0..<300 where expired.withLock({ $0.count }) < 3 { usleep(10_000) }
        let seen = expired.withLock { $0 }
        #expect(seen.map(\.0) == [2, 3, 1])
        for (id, time) in seen {
            let due = [1: 0.6, 2: 0.2, 3: 0.4][id]!
            #expect(time.timeIntervalSince(start) >= due - 0.01 && time.timeIntervalSince(start) < due + 0.5, "stream \(id)")
        }
    }

    @Test func streamsThatCloseFirstLeaveABoundedHeap() {
        let expiry = StreamExpiry()
        expiry.start { _ in }
        defer { expiry.cancel() }
        let later = Date().addingTimeInterval(3600)
        for id in 0..<5000 {
            expiry.add(id, at: later)
            expiry.forget(id)
        }
        expiry.add(5000, at: later)
        // Twice the live entries plus a constant, however many streams came and went.
        #expect(expiry.heldEntries <= 2 * 1 + 1024 + 1)
    }
}
