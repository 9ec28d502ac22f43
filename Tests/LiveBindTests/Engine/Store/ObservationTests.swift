import Synchronization
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Observation") struct ObservationTests {
    @Test func observersHearChangesAtAboveAndBelowTheirPath() throws {
        let store = Store()
        try store.put("sensor", json(#"{"temperature": 1, "readings": [], "other": 0}"#))
        let at = EngineRecorder<Change>(), above = EngineRecorder<Change>(), below = EngineRecorder<Change>()
        let other = EngineRecorder<Change>()
        let tokens = [
            store.observe(try path("temperature"), in: "sensor", at.handler),
            store.observe(.root, in: "sensor", above.handler),
            store.observe(try path("readings.0.value"), in: "sensor", below.handler),
            store.observe(try path("other"), in: "sensor", other.handler)
        ]
        try store.set(2, at: path("temperature"), in: "sensor")
        try store.append(["value": 3], to: path("readings"), in: "sensor")
        try store.put("sensor", ["temperature": 5])
        #expect(at.events.map(\.kind) == [.set, .set])
        #expect(above.events.map(\.kind) == [.set, .insert, .set])
        #expect(
            below.events == [
                Change(kind: .insert, path: try path("readings"), value: ["value": 3], index: 0),
                Change(kind: .set, path: .root, value: ["temperature": 5])
            ])
        #expect(other.events.count == 1)
        try store.drop("sensor")
        #expect(other.events.last == Change(kind: .remove, path: .root))
        _ = tokens
    }

    /// An insert says whether it made the array's last element when it was committed (what a client
    /// needs to send it as an append, whatever rows came after it before its observer ran); equality
    /// does not look at that.
    @Test func anInsertSaysWhetherItWasAtTheEnd() throws {
        let store = Store()
        try store.put("list", ["rows": [1, 2]])
        let recorder = EngineRecorder<Change>()
        let token = store.observe(.root, in: "list", recorder.handler)
        try store.append(3, to: path("rows"), in: "list")
        try store.insert(0, at: 0, in: path("rows"), of: "list")
        try store.insert(4, at: 4, in: path("rows"), of: "list")
        try store.set(5, at: Path(pointer: "/rows/-"), in: "list")
        #expect(recorder.events.map(\.atEnd) == [true, false, true, true])
        var appended = Change(kind: .insert, path: try path("rows"), value: 9, index: 0)
        appended.atEnd = true
        #expect(appended == Change(kind: .insert, path: try path("rows"), value: 9, index: 0))
        _ = token
    }

    @Test func observersOfOtherModelsHearNothing() throws {
        let store = Store()
        try store.put("a", ["x": 1])
        try store.put("b", ["x": 1])
        let recorder = EngineRecorder<Change>()
        let token = store.observe(try path("x"), in: "b", recorder.handler)
        try store.set(2, at: path("x"), in: "a")
        #expect(recorder.events.isEmpty)
        token.cancel()
    }

    @Test func observeAllSeesEveryCommitInOrder() throws {
        let store = Store()
        let recorder = EngineRecorder<Commit>()
        let token = store.observeAll(recorder.handler)
        try store.put("a", ["x": 1])
        try store.set(2, at: path("x"), in: "a")
        try store.drop("a")
        let events = recorder.events
        #expect(events.map(\.sequence) == [1, 2, 3])
        #expect(events.map(\.revision) == [1, 2, 3])
        guard case .snapshot(let value) = events[0].kind, case .changes(let changes) = events[1].kind,
            case .drop = events[2].kind
        else {
            Issue.record("unexpected commit kinds \(events.map(\.kind))")
            return
        }
        #expect(value == ["x": 1])
        #expect(changes == [Change(kind: .set, path: try path("x"), value: 2)])
        token.cancel()
    }

    @Test func cancellingIsIdempotentAndStopsDelivery() throws {
        let store = Store()
        try store.put("a", ["x": 1])
        let recorder = EngineRecorder<Change>()
        let token = store.observe(.root, in: "a", recorder.handler)
        try store.set(2, at: path("x"), in: "a")
        token.cancel()
        token.cancel()
        #expect(token.isCancelled)
        try store.set(3, at: path("x"), in: "a")
        #expect(recorder.events.count == 1)
    }

    @Test func releasingTheTokenCancels() throws {
        let store = Store()
        try store.put("a", ["x": 1])
        let recorder = EngineRecorder<Change>()
        var token: ObservationToken? = store.observe(.root, in: "a", recorder.handler)
        weak let weakToken = token
        try store.set(2, at: path("x"), in: "a")
        token = nil
        #expect(weakToken == nil)
        try store.set(3, at: path("x"), in: "a")
        #expect(recorder.events.count == 1)
    }

    @Test func aTokenOutlivingItsStoreIsHarmless() throws {
        var store: Store? = Store()
        weak let weakStore = store
        let token = store!.observeAll { _ in }
        store = nil
        #expect(weakStore == nil)
        token.cancel()
    }

    @Test func writesFromInsideAnObserverAreDeliveredAfterTheCurrentOne() throws {
        let store = Store()
        try store.put("a", ["x": 0, "y": 0])
        let log = OrderedMutex<[String]>([])
        let first = store.observe(try path("x"), in: "a") { change in
            log.withLock { $0.append("x=\(change.value!)") }
            // A binding-like write: commits now, is delivered after this call returns.
            _ = try? store.set(change.value!, at: Path(["y"]), in: "a")
            log.withLock { $0.append("x done") }
        }
        let second = store.observe(try path("y"), in: "a") { change in
            log.withLock { $0.append("y=\(change.value!)") }
        }
        try store.set(5, at: path("x"), in: "a")
        #expect(log.withLock { $0 } == ["x=5", "x done", "y=5"])
        #expect(try store.value(of: "a", at: path("y")) == 5)
        _ = (first, second)
    }

    @Test func aReusedPathReachesObserversAddedAndCancelledBetweenWrites() throws {
        let store = Store()
        try store.put("a", ["x": 0])
        let x = try path("x")  // one pre-parsed path for every write, as a hot loop uses it
        let first = EngineRecorder<Change>(), second = EngineRecorder<Change>(), whole = EngineRecorder<Change>()
        let firstToken = store.observe(x, in: "a", first.handler)
        try store.set(1, at: x, in: "a")
        let secondToken = store.observe(x, in: "a", second.handler)
        try store.set(2, at: x, in: "a")
        let wholeToken = store.observe(.root, in: "a", whole.handler)
        try store.set(3, at: x, in: "a")
        firstToken.cancel()
        secondToken.cancel()
        try store.set(4, at: x, in: "a")
        wholeToken.cancel()
        try store.set(5, at: x, in: "a")
        #expect(first.events.compactMap(\.value) == [1, 2, 3])
        #expect(second.events.compactMap(\.value) == [2, 3])
        #expect(whole.events.compactMap(\.value) == [3, 4])
    }

    @Test func observersRunWithoutTheLockHeld() throws {
        let store = Store()
        try store.put("a", ["x": 0])
        let seen = OrderedMutex<[JSON]>([])
        let token = store.observe(try path("x"), in: "a") { _ in
            // Reading the store from an observer must not deadlock.
            let value = try? store.value(of: "a", at: Path(["x"]))
            seen.withLock { $0.append(value ?? .null) }
        }
        try store.set(1, at: path("x"), in: "a")
        #expect(seen.withLock { $0 } == [1])
        token.cancel()
    }
}
