import DequeModule
import Foundation
import Synchronization
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindHTTP
@testable import LiveBindEngine

/// Holds the first view arranged outside the event hub's lock, through the hub's test seam, until released.
final class ArrangeGate: Sendable {
    /// Signalled when a view is being arranged (and waits there).
    let reached = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)
    private let first = Atomic<Bool>(true)

    func release() { released.signal() }

    /// The seam: runs on the thread opening the stream, while its new views are arranged.
    func whileArranging() {
        guard first.exchange(false, ordering: .acquiringAndReleasing) else { return }
        reached.signal()
        _ = released.wait(timeout: .now() + 30)  // bounded, should the test fail before releasing it
    }
}

/// These drive the hub directly: a stream's request thread arranges its new views, and a test through
/// HTTP could not tell which of libmicrohttpd's threads that is.
@Suite("Views arranged outside the event hub's lock") struct ViewArrangingTests {
    static let view = "orders/items;where=status:eq:open;order=-time;limit=3"

    static func orders(_ count: Int) -> JSON {
        .array(
            Deque(
                (0..<count).map {
                    JSON.object(["id": .int($0), "status": .string($0 % 2 == 0 ? "open" : "done"), "time": .int($0)])
                }))
    }

    /// The `id`s of a list of rows.
    static func ids(_ value: Any?) -> [Int] { (value as? [[String: Any]])?.compactMap { $0["id"] as? Int } ?? [] }

    /// A hub over `count` orders whose views are held, while arranged, by `gate`.
    struct Fixture {
        let base: HubTestFixture
        let gate = ArrangeGate()
        var store: Store { base.store }

        init(orders count: Int, maxViews: Int = 256, maxViewRows: Int = 1_000_000) throws {
            let store = Store()
            try store.put("orders", ["items": ViewArrangingTests.orders(count)])
            base = HubTestFixture(
                store: store,
                settings: .init(
                    retainedEvents: 64, maxStreams: 8, maxViews: maxViews,
                    maxViewRows: maxViewRows, whileArranging: gate.whileArranging))
        }

        /// Opens the view on a thread of its own, runs `write` while the view is arranged, and returns
        /// the stream once it is open. The write must finish while the view is being arranged.
        func open(during write: (Store) throws -> Void) throws -> Int {
            defer { gate.release() }  // once more: harmless, and no opener waits 30 s should a check throw
            let opened = Mutex<Int?>(nil)
            let base = base
            let opener = TestThread {
                let id = try base.open([ViewArrangingTests.view])
                opened.withLock { $0 = id }
            }
            #expect(gate.reached.wait(timeout: .now() + 10) == .success, "the view was never arranged")
            try write(store)
            // The feed publishes each commit under the hub's lock: it does so only if the lock is free.
            #expect(base.caughtUp(), "no commit was published while the view was arranged")
            gate.release()
            try opener.join(seconds: 30)
            return try #require(opened.withLock { $0 })
        }

        func read(_ id: Int) throws -> [HubTestFixture.Event] { try base.read(id) }

        /// The ids of the rows stream `id`'s view snapshot shows.
        func snapshotRows(_ id: Int) throws -> [Int] {
            ViewArrangingTests.ids(try #require(try read(id).first { $0.type == "snapshot" }).data["value"])
        }
    }

    /// While a new view is arranged, commits go on (the hub's lock is free), and the view catches up
    /// with them: its snapshot has them.
    @Test func commitsMadeWhileAViewIsArrangedReachIt() throws {
        let fixture = try Fixture(orders: 20_000)
        defer { fixture.base.stop() }
        let id = try fixture.open { store in
            try store.append(["id": 20_000, "status": "open", "time": 90_000], to: Path(pointer: "/items"), in: "orders")
            try store.set("done", at: Path(pointer: "/items/19998/status"), in: "orders")
        }
        #expect(try fixture.snapshotRows(id) == [20_000, 19_996, 19_994])
    }

    /// A commit that replaces the array while a view is arranged: the view is arranged again (under the
    /// lock) from the array as it is then.
    @Test func anArrayReplacedWhileAViewIsArrangedIsArrangedAgain() throws {
        let fixture = try Fixture(orders: 20_000)
        defer { fixture.base.stop() }
        let id = try fixture.open { store in
            try store.set(ViewArrangingTests.orders(10), at: Path(pointer: "/items"), in: "orders")
            try store.set("open", at: Path(pointer: "/items/1/status"), in: "orders")
        }
        #expect(try fixture.snapshotRows(id) == [8, 6, 4])
    }

    /// After catching up, the view's events are those of a view arranged from scratch.
    @Test func aCaughtUpViewGoesOnLikeANewOne() throws {
        let fixture = try Fixture(orders: 1_000)
        defer { fixture.base.stop() }
        let id = try fixture.open { store in
            try store.set(5_000, at: Path(pointer: "/items/2/time"), in: "orders")  // order 2 to the top
        }
        var rows = try fixture.snapshotRows(id)
        #expect(rows == [2, 998, 996])
        try fixture.store.set(6_000, at: Path(pointer: "/items/4/time"), in: "orders")  // order 4 above it
        for event in try fixture.read(id) {
            for change in event.data["changes"] as? [[String: Any]] ?? [event.data.merging(["kind": event.type]) { own, _ in own }] {
                switch change["kind"] as? String ?? "" {
                case "insert": rows.insert(Self.ids([change["value"] as Any]).first ?? -1, at: change["index"] as? Int ?? 0)
                case "remove": rows.remove(at: change["index"] as? Int ?? 0)
                case "move": rows.insert(rows.remove(at: change["from"] as? Int ?? 0), at: change["to"] as? Int ?? 0)
                default: break
                }
            }
        }
        #expect(rows == [4, 2, 998])
    }

    /// Views being arranged count against the limits: requests arranging at once cannot pass them
    /// (each would pay for its arrangement and be refused only afterwards).
    @Test func viewsBeingArrangedCountAgainstTheLimits() throws {
        for (maxViews, maxViewRows) in [(1, 1_000_000), (256, 1_500)] {
            let fixture = try Fixture(orders: 1_000, maxViews: maxViews, maxViewRows: maxViewRows)
            defer { fixture.base.stop() }
            let base = fixture.base
            let first = TestThread { _ = try base.open([ViewArrangingTests.view]) }
            #expect(fixture.gate.reached.wait(timeout: .now() + 10) == .success, "the view was never arranged")
            #expect(throws: RequestError.self, "limits \(maxViews), \(maxViewRows)") {
                try base.open(["orders/items;where=status:eq:done;limit=3"])
            }
            fixture.gate.release()
            try first.join(seconds: 30)
            // Once it is registered, it is a view like any: the second is still refused.
            #expect(throws: RequestError.self) { try base.open(["orders/items;where=status:eq:done;limit=3"]) }
        }
    }
}
