import DequeModule
import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// These drive the hub directly, as `ViewArrangingTests` do: the arrangement is held at the hub's test
/// seam, so the test knows it is under way while it writes and reads, and counts the work done under
/// the lock instead of timing it (the HTTP test with a timed bound: Tests/property/test_lock_hold.py).
@Suite("Views whose array was replaced, arranged outside the event hub's lock") struct ViewRearrangingTests {
    static let view = "orders/items;where=status:eq:open;order=-time;limit=3"

    /// `count` orders with ids (and times) from `first`, the even ones open.
    static func orders(_ count: Int, from first: Int) -> JSON {
        .array(Deque((first..<first + count).map {
            JSON.object(["id": .int($0), "status": .string($0 % 2 == 0 ? "open" : "done"), "time": .int($0)])
        }))
    }

    /// The events stream `id` sends, read until one satisfies `found` (within 30 s).
    static func read(_ id: Int, of fixture: HubTestFixture, until found: (HubTestFixture.Event) -> Bool) throws -> HubTestFixture.Event? {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let event = try fixture.read(id).first(where: found) { return event }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return nil
    }

    /// A commit that replaces a viewed array with a long one: while the view is arranged again, another
    /// model's commit is published and read (the hub's lock is free), the view's stream sends nothing,
    /// and no element is arranged under the lock; then the view's stream gets a snapshot of the new
    /// array with the commits made meanwhile.
    @Test func aLongReplacedArrayIsArrangedWhileOtherStreamsGoOn() throws {
        let store = Store()
        try store.put("orders", ["items": Self.orders(20_000, from: 0)])
        try store.put("other", ["count": 0])
        let gate = ArrangeGate()
        let fixture = HubTestFixture(store: store, settings: .init(retainedEvents: 64, maxStreams: 8,
                                                                   whileRearranging: gate.whileArranging))
        defer {
            gate.release()
            fixture.stop()
        }
        let viewer = try fixture.open([Self.view])
        let first = try #require(try fixture.read(viewer).first { $0.type == "snapshot" })
        #expect(ViewArrangingTests.ids(first.data["value"]) == [19_998, 19_996, 19_994])
        let watcher = try fixture.open([], models: ModelFilter(names: ["other"]))
        _ = try fixture.read(watcher)
        let before = fixture.hub.metrics

        try store.set(Self.orders(20_000, from: 100_000), at: Path(pointer: "/items"), in: "orders")
        #expect(gate.reached.wait(timeout: .now() + 10) == .success, "the view was never arranged again")
        try store.set(1, at: Path(pointer: "/count"), in: "other")
        try store.append(["id": 200_000, "status": "open", "time": 300_000], to: Path(pointer: "/items"), in: "orders")
        // `read` first waits until the hub published both commits: it took its lock meanwhile.
        #expect(try fixture.read(watcher).contains { ($0.data["value"] as? Int) == 1 })
        #expect(try fixture.read(viewer).isEmpty, "the view's stream sent something before its view was arranged")
        #expect(fixture.hub.metrics.viewRowsArrangedUnderLock == before.viewRowsArrangedUnderLock)

        gate.release()
        let snapshot = try #require(try Self.read(viewer, of: fixture) { $0.type == "snapshot" })
        #expect(ViewArrangingTests.ids(snapshot.data["value"]) == [200_000, 119_998, 119_996])
        let after = fixture.hub.metrics
        #expect(after.viewRowsArranged - before.viewRowsArranged >= 20_000)
        // Under the lock: the one change the view caught up with.
        #expect(after.viewRowsArrangedUnderLock - before.viewRowsArrangedUnderLock == 1)
        // And it goes on from there, change by change.
        try store.set("done", at: Path(pointer: "/items/20000/status"), in: "orders")
        #expect(try fixture.read(viewer).contains { $0.type != "snapshot" })
    }

    /// A short array replaced is arranged at once, under the lock: its stream gets the new rows in the
    /// replacing commit's event, as before, and no snapshot.
    @Test func aShortReplacedArrayIsArrangedAtOnce() throws {
        let store = Store()
        try store.put("orders", ["items": Self.orders(100, from: 0)])
        let fixture = HubTestFixture(store: store)
        defer { fixture.stop() }
        let viewer = try fixture.open([Self.view])
        _ = try fixture.read(viewer)
        let before = fixture.hub.metrics
        try store.set(Self.orders(50, from: 1_000), at: Path(pointer: "/items"), in: "orders")
        let events = try fixture.read(viewer)
        #expect(!events.contains { $0.type == "snapshot" })
        #expect(events.contains { ViewArrangingTests.ids($0.data["value"]) == [1_048, 1_046, 1_044] })
        #expect(fixture.hub.metrics.viewRowsArrangedUnderLock - before.viewRowsArrangedUnderLock == 50)
    }
}
