import Foundation
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindHTTP
@testable import LiveBindEngine

/// A store and an event hub fed as the server feeds it: durable commits go through an `EventFeed`
/// (whole batches, so a write to several models is published in one call, and never under the store's
/// lock: the hub takes the store's lock inside its own). Call `stop()` at the end.
struct HubTestFixture {
    /// A connection that is never woken for real: the test reads when it wants.
    final class Connection: HTTPStreamConnection {
        func suspend() {}
        func resume() {}
    }

    /// One event a stream sent: its type, its `id:` line (nil without one) and its data.
    struct Event {
        let type: String
        let id: UInt64?
        let data: [String: Any]
    }

    let store: Store
    let hub: EventHub
    let feed: EventFeed
    let observation: ObservationToken

    init(store: Store = Store(), settings: EventHub.Settings = .init(retainedEvents: 64, maxStreams: 8)) {
        self.store = store
        let hub = EventHub(store: store, settings: settings)
        let feed = EventFeed(hub: hub)
        (self.hub, self.feed) = (hub, feed)
        observation = store.observeDurable { commits in feed.publish(commits) }
    }

    func stop() { feed.stop() }

    /// Whether the hub has published every commit the store made, within `seconds`.
    func caughtUp(within seconds: Double = 10) -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while hub.state.withLock({ $0.log.newestSequence }) < store.visibleSequence {
            guard ContinuousClock.now < deadline else { return false }
            Thread.sleep(forTimeInterval: 0.001)
        }
        return true
    }

    /// Opens a stream of the locations `subs` (`model/pointer;…`, as `sub=` takes them).
    func open(_ subs: [String], models: ModelFilter = ModelFilter(names: [])) throws -> Int {
        let locations = try subs.map { try Subscription.parse($0, maxWindow: 10_000) }
        return try hub.subscribe(models: models, lastEventID: nil, locations: locations)
    }

    /// The events stream `id` has to send once the hub has every commit made so far.
    func read(_ id: Int) throws -> [Event] {
        guard caughtUp() else { throw TestSocketError(description: "the hub did not publish the store's commits") }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        let connection = Connection()
        while case .bytes(let count) = buffer.withUnsafeMutableBytes({ hub.read(id, into: $0, connection: connection) }) {
            bytes += buffer[..<count]
        }
        return try String(decoding: bytes, as: UTF8.self).components(separatedBy: "\n\n").compactMap { block in
            let lines = block.split(separator: "\n")
            guard let type = lines.first(where: { $0.hasPrefix("event: ") })?.dropFirst(7),
                let data = lines.first(where: { $0.hasPrefix("data: ") })?.dropFirst(6)
            else { return nil }
            let object = try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] ?? [:]
            return Event(
                type: String(type), id: lines.first(where: { $0.hasPrefix("id: ") }).flatMap { UInt64($0.dropFirst(4)) },
                data: object)
        }
    }
}
