import Foundation
import Synchronization
import Testing
@testable import LiveBindClient
@testable import LiveBindEngine

/// The Swift client against a `livebind-server` process on a loopback port: the mirror's store ends
/// equal to the server's documents whatever the server and the application do to them; the
/// application's own writes to the store reach the server once each; observers of the store see
/// the server's changes as granular changes; refusals and read-only places are put back.
@Suite("The Swift client's mirror", .serialized)
struct MirrorTests {
    final class Server {
        let process: ServerProcess
        let port: Int
        init(_ arguments: [String] = ["--heartbeat", "1"]) throws {
            process = try ServerProcess(arguments)
            port = try process.waitForPort(timeout: 30)
        }
        deinit { if (try? process.terminate()) == nil { try? process.kill() } }
        var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

        @discardableResult
        func send(
            _ method: String, _ target: String, _ body: String? = nil,
            type: String = "application/json"
        ) throws -> TestHTTPResponse {
            guard let body else { return try TestHTTPClient.request(port: port, method, target) }
            return try TestHTTPClient.send(port: port, method, target, body, type: type)
        }

        func document(_ model: String) throws -> JSON? {
            let answer = try TestHTTPClient.request(port: port, "GET", "/models/\(model)")
            return answer.status == 200 ? try JSON(parsing: answer.body) : nil
        }
    }

    static func eventually(_ what: String, timeout: Double = 60, _ condition: () throws -> Bool) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("timed out waiting for \(what)")
        throw CancellationError()
    }

    static func converged(_ store: Store, _ server: Server, _ models: [String]) throws -> Bool {
        try models.allSatisfy { (try? store.value(of: $0)) == (try server.document($0)) }
    }

    /// Random writes by the server's other clients and by the application through the store, in
    /// every kind the engine has, interleaved: the store and the server converge, and every row the
    /// application inserted is on the server exactly once.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func writesFromBothSidesConverge(seed: UInt64) async throws {
        let server = try Server()
        try server.send("PUT", "/models/orders", #"{"items":[],"note":"n"}"#)
        try server.send("PUT", "/models/sensor", #"{"t":20,"meta":{"unit":"C"}}"#)
        let store = Store()
        let refusals = OrderedMutex(0)
        let client = try LiveBindClient(url: server.url)
        let mirror = try client.mirror(
            ["orders", "sensor/meta"], into: store, heartbeat: .seconds(1),
            onRefusal: { _ in refusals.withLock { $0 += 1 } })
        #expect(await mirror.waitUntilSynced(timeout: .seconds(60)), "\(mirror.status)")
        var random = SplitMix(seed: seed)
        var local: Set<String> = []
        for step in 0..<120 {
            let items = (try? store.value(of: "orders", at: Path(pointer: "/items")).arrayValue?.count) ?? 0
            switch random.next() % 10 {
            case 0, 1:
                try server.send("POST", "/models/orders/items", #"{"id":"s\#(step)","qty":1}"#)
            case 2:
                try server.send("PUT", "/models/sensor/meta/unit", #""u\#(step)""#)
            case 3 where items > 0:
                try server.send("DELETE", "/models/orders/items/\(Int(random.next() % UInt64(items)))")
            case 4, 5:
                // The application appends through the engine's own API; the mirror sends it.
                let id = "l\(step)"
                local.insert(id)
                _ = try? store.append(.object(["id": .string(id), "qty": .int(2)]), to: Path(pointer: "/items"), in: "orders")
            case 6 where items > 1:
                _ = try? store.move(from: 0, to: items - 1, in: Path(pointer: "/items"), of: "orders")
            case 7:
                _ = try? store.set(.string("note \(step)"), at: Path(pointer: "/note"), in: "orders")
            case 8:
                _ = try? store.set(.int(step), at: Path(pointer: "/meta/n"), in: "sensor")
            default:
                try await Task.sleep(for: .milliseconds(Int(random.next() % 20)))
            }
        }
        try await Self.eventually("the store to converge") {
            try Self.converged(store, server, ["orders"])
                && (try? store.value(of: "sensor", at: Path(pointer: "/meta"))) == (try server.document("sensor"))?["meta"]
        }
        // A refused local write (If-Match against a model that moved on) is put back; every row the
        // application inserted and that was not refused is on the server once.
        let ids = try #require(try server.document("orders")?["items"]?.arrayValue).compactMap { $0["id"]?.stringValue }
        #expect(Set(ids).count == ids.count, "a row is on the server twice: \(ids)")
        let missing = local.subtracting(ids)
        #expect(missing.count <= refusals.withLock { $0 }, "local rows lost without a refusal: \(missing)")
        #expect(mirror.status.error == nil)
        await mirror.close()
    }

    /// A location is written without `If-Match`: nothing is refused, so every row the application
    /// appends while the server's other clients append and remove is on the server exactly once, and
    /// the store ends equal to the server's location.
    @Test(arguments: [4, 5] as [UInt64])
    func noLocalWriteIsLostOrAppliedTwice(seed: UInt64) async throws {
        let server = try Server()
        try server.send("PUT", "/models/orders", #"{"items":[]}"#)
        let store = Store()
        let refusals = OrderedMutex(0)
        let mirror = try LiveBindClient(url: server.url).mirror(
            ["orders/items"], into: store, heartbeat: .seconds(1), onRefusal: { _ in refusals.withLock { $0 += 1 } })
        #expect(await mirror.waitUntilSynced(timeout: .seconds(60)), "\(mirror.status)")
        var random = SplitMix(seed: seed)
        var local: [String] = []
        for step in 0..<150 {
            switch random.next() % 4 {
            case 0:
                try server.send("POST", "/models/orders/items", #"{"id":"s\#(step)"}"#)
            case 1:
                local.append("l\(step)")
                try store.append(.object(["id": .string("l\(step)")]), to: Path(pointer: "/items"), in: "orders")
            case 2:
                let rows = try server.document("orders")?["items"]?.arrayValue ?? []
                if let row = rows.firstIndex(where: { $0["id"]?.stringValue?.hasPrefix("s") == true }) {
                    try server.send("DELETE", "/models/orders/items/\(row)")
                }
            default:
                try await Task.sleep(for: .milliseconds(Int(random.next() % 5)))
            }
        }
        try await Self.eventually("the store to converge") {
            (try? store.value(of: "orders", at: Path(pointer: "/items"))) == (try server.document("orders"))?["items"]
        }
        let ids = try #require(try server.document("orders")?["items"]?.arrayValue).compactMap { $0["id"]?.stringValue }
        #expect(ids.filter { $0.hasPrefix("l") }.sorted() == local.sorted())
        #expect(refusals.withLock { $0 } == 0)
        await mirror.close()
    }

    /// An event larger than `maxEventBytes` drops the stream (the client's memory stays bounded): the
    /// mirror does not sync while the model is too large, and does once it is small again.
    @Test func anEventPastTheLimitDropsTheStream() async throws {
        let server = try Server()
        try server.send("PUT", "/models/big", #"{"text":"\#(String(repeating: "x", count: 8000))"}"#)
        let store = Store()
        let mirror = try LiveBindClient(url: server.url).mirror(
            ["big"], into: store, heartbeat: .seconds(1),
            maxEventBytes: 4096)
        #expect(await !mirror.waitUntilSynced(timeout: .seconds(2)))
        #expect(mirror.status.reconnects > 0 && (try? store.value(of: "big")) == nil)
        try server.send("PUT", "/models/big", #"{"text":"small"}"#)
        #expect(await mirror.waitUntilSynced(timeout: .seconds(60)), "\(mirror.status)")
        #expect(try store.value(of: "big") == (try server.document("big")))
        await mirror.close()
    }

    /// A process too busy to read (every thread of the cooperative pool blocked for longer than two
    /// heartbeats, as a loaded test run or an application doing blocking work does) keeps its stream:
    /// the heartbeats arrived, so the server was not silent, and the stream goes on where it was.
    @Test func aBusyProcessKeepsItsStream() async throws {
        let server = try Server()
        try server.send("PUT", "/models/gauge", #"{"t":1}"#)
        let store = Store()
        let mirror = try LiveBindClient(url: server.url).mirror(["gauge"], into: store, heartbeat: .seconds(1))
        #expect(await mirror.waitUntilSynced(timeout: .seconds(60)), "\(mirror.status)")
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<ProcessInfo.processInfo.activeProcessorCount {
                group.addTask { usleep(3_500_000) }
            }
        }
        try server.send("PUT", "/models/gauge/t", "2")
        try await Self.eventually("the change after the busy time") { try store.value(of: "gauge") == .object(["t": 2]) }
        #expect(mirror.status.reconnects == 0, "\(mirror.status)")
        await mirror.close()
    }

    /// Observers of the local store hear the server's changes as the engine's own granular changes.
    @Test func observersSeeGranularChanges() async throws {
        let server = try Server()
        try server.send("PUT", "/models/orders", #"{"items":[{"id":"a"},{"id":"b"}]}"#)
        let store = Store()
        let mirror = try LiveBindClient(url: server.url).mirror(["orders/items"], into: store, heartbeat: .seconds(1))
        #expect(await mirror.waitUntilSynced(timeout: .seconds(60)), "\(mirror.status)")
        let kinds = OrderedMutex<[Change.Kind]>([])
        let token = try store.observe(Path(pointer: "/items"), in: "orders") { change in kinds.withLock { $0.append(change.kind) } }
        try server.send("POST", "/models/orders/items", #"{"id":"c"}"#)
        try server.send("DELETE", "/models/orders/items/0")
        try server.send(
            "PATCH", "/models/orders", #"[{"op":"move","from":"/items/0","path":"/items/1"}]"#,
            type: "application/json-patch+json")
        try await Self.eventually("three changes") { kinds.withLock { $0.count } >= 3 }
        #expect(kinds.withLock { $0 } == [.insert, .remove, .move])
        #expect(try store.value(of: "orders", at: Path(pointer: "/items")) == (try server.document("orders"))?["items"])
        token.cancel()
        await mirror.close()
    }

    /// `set` against a revision the server moved past is refused: the store shows the server's
    /// value again before it throws. A write to a window is put back and reported.
    @Test func refusalsAndReadOnlyPlacesAreRolledBack() async throws {
        let server = try Server()
        try server.send("PUT", "/models/sensor", #"{"t":1,"rows":[1,2,3,4,5]}"#)
        let store = Store()
        let refusals = OrderedMutex<[LiveBindClientError]>([])
        let mirror = try LiveBindClient(url: server.url).mirror(
            ["sensor/t", MirrorTarget("sensor/rows;last=2", into: "recent/rows")], into: store, heartbeat: .seconds(1),
            onRefusal: { error in refusals.withLock { $0.append(error) } })
        #expect(await mirror.waitUntilSynced(timeout: .seconds(60)), "\(mirror.status)")
        #expect(try store.value(of: "recent", at: Path(pointer: "/rows")) == .array([4, 5]))
        #expect(
            mirror.window(of: try MirrorTarget("sensor/rows;last=2", into: "recent/rows")) == ServerMirror.ArrayWindow(offset: 3, length: 5)
        )
        let answer = try await mirror.set(2, at: "sensor/t")
        #expect(answer?["rev"] != nil)
        // A location alone writes without If-Match by default; ask for it against an old revision.
        try server.send("PUT", "/models/sensor/rows", "[7,8,9]")
        try await Self.eventually("the window to follow") { (try? store.value(of: "recent", at: Path(pointer: "/rows"))) == .array([8, 9]) }
        await #expect(throws: LiveBindClientError.self) { try await mirror.set(3, at: "sensor/t", ifMatch: true) }
        #expect(try store.value(of: "sensor", at: Path(pointer: "/t")) == .int(2))
        try store.set(.int(99), at: Path(pointer: "/rows/0"), in: "recent")
        try await Self.eventually("the window to be put back") {
            (try? store.value(of: "recent", at: Path(pointer: "/rows"))) == .array([8, 9]) && refusals.withLock { !$0.isEmpty }
        }
        #expect(try server.document("sensor")?["rows"] == .array([7, 8, 9]))
        await mirror.close()
    }
}
