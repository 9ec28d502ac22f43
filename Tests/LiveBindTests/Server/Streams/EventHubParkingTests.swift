import Synchronization
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindHTTP
@testable import LiveBindEngine

/// A stream parked (suspended) while only other models' events pass must not be told it fell behind:
/// the events that left the log meanwhile were none of its own. These drive the hub directly, so the
/// stream is parked for certain before the other models' events arrive.
@Suite("Event hub: parked streams") struct EventHubParkingTests {
    /// A connection that counts how often the hub woke it.
    final class Connection: HTTPStreamConnection {
        let wakes = Atomic<Int>(0)
        func suspend() {}
        func resume() { wakes.add(1, ordering: .relaxed) }
    }

    /// Reads stream `id` until the hub parks it; returns what it sent.
    static func readUntilParked(_ hub: EventHub, _ id: Int, _ connection: Connection) -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let result = buffer.withUnsafeMutableBytes { hub.read(id, into: $0, connection: connection) }
            guard case .bytes(let count) = result else {
                #expect(result == .suspended)
                return String(decoding: bytes, as: UTF8.self)
            }
            bytes += buffer[..<count]
        }
    }

    /// A store with models `a` and `b`, and a hub the test publishes to itself (as the server's feed
    /// would): `write(model)` commits a set of `/v` and publishes its frame; it returns the frame's text.
    struct Fixture {
        let store = Store()
        let hub: EventHub

        init() throws {
            try store.put("a", ["v": 0])
            try store.put("b", ["v": 0])
            hub = EventHub(store: store, settings: .init(retainedEvents: 16, maxStreams: 4))
        }

        @discardableResult
        func write(_ model: String) throws -> String {
            let value = Int(store.visibleSequence) + 1  // a new value each time: setting the same one commits nothing
            try store.set(.int(value), at: Path(pointer: "/v"), in: model)
            let sequence = store.visibleSequence
            let text = "id: \(sequence)\nevent: set\ndata: {\"model\":\"\(model)\",\"path\":\"/v\",\"value\":\(value)}\n\n"
            hub.publish(EventFrame(sequence: sequence, model: model, isCommit: true, bytes: Array(text.utf8)))
            return text
        }
    }

    @Test func otherModelsPassingTheRetainedEventsDoNotMakeAParkedStreamResync() throws {
        let fixture = try Fixture()
        let hub = fixture.hub
        let id = try hub.subscribe(models: ModelFilter(names: ["a"]), lastEventID: nil)
        let connection = Connection()
        #expect(Self.readUntilParked(hub, id, connection).contains("event: snapshot"))
        for _ in 1...100 { try fixture.write("b") }
        #expect(connection.wakes.load(ordering: .relaxed) == 0)
        let own = try fixture.write("a")
        #expect(connection.wakes.load(ordering: .relaxed) == 1)
        let sent = Self.readUntilParked(hub, id, connection)
        #expect(sent == own, "expected only a's event, got: \(sent.prefix(300))")
        #expect(hub.metrics.laggingClients == 0)
    }

    @Test func aHeartbeatAfterOtherModelsPassedSendsOnlyTheHeartbeat() throws {
        let fixture = try Fixture()
        let hub = fixture.hub
        let id = try hub.subscribe(models: ModelFilter(names: ["a"]), lastEventID: nil)
        let connection = Connection()
        _ = Self.readUntilParked(hub, id, connection)
        for _ in 1...100 { try fixture.write("b") }
        hub.heartbeat()
        hub.heartbeat()
        #expect(connection.wakes.load(ordering: .relaxed) == 1)
        let sent = Self.readUntilParked(hub, id, connection)
        #expect(sent == String(decoding: EventEncoder.heartbeat, as: UTF8.self), "got: \(sent.prefix(300))")
        let own = try fixture.write("a")
        #expect(Self.readUntilParked(hub, id, connection) == own)
        #expect(hub.metrics.laggingClients == 0)
    }

    @Test func aWokenStreamThatDoesNotReadWhileItsOwnEventsLeaveTheLogStillResyncs() throws {
        let fixture = try Fixture()
        let hub = fixture.hub
        let id = try hub.subscribe(models: ModelFilter(names: ["a"]), lastEventID: nil)
        let connection = Connection()
        _ = Self.readUntilParked(hub, id, connection)
        for _ in 1...100 { try fixture.write("a") }
        let sent = Self.readUntilParked(hub, id, connection)
        #expect(sent.hasPrefix("event: resync\ndata: {\"reason\":\"lagging\"}\n\n"), "got: \(sent.prefix(300))")
        #expect(hub.metrics.laggingClients == 1)
    }
}
