import LiveBindEngine
internal import LiveBindHTTP

/// One `GET /events` response body: reads its subscriber's frames from the hub.
final class EventStream: HTTPStreamBody {
    let hub: EventHub
    let id: Int
    /// The stream's share of its client address (`--max-streams-per-address`), given back at its end.
    let hold: AddressQuota.Hold?

    /// What goes out before the hub's frames (a replay of history, `/events?since=`), and how much of it went.
    private let prefix: OrderedMutex<(bytes: [UInt8], sent: Int)>
    /// Where the prefix's bytes are counted while unsent.
    private let replays: ReplayBudget?
    /// Runs once the stream has ended and left the hub (it releases the presence entries it held).
    private let ended: (@Sendable () -> Void)?

    init(
        hub: EventHub, id: Int, hold: AddressQuota.Hold? = nil, prefix: [UInt8] = [],
        replays: ReplayBudget? = nil, ended: (@Sendable () -> Void)? = nil
    ) {
        self.hub = hub
        self.id = id
        self.hold = hold
        self.prefix = OrderedMutex((prefix, 0))
        self.replays = replays
        self.ended = ended
    }

    /// Called on a libmicrohttpd worker thread.
    func read(into buffer: UnsafeMutableRawBufferPointer, connection: any HTTPStreamConnection) -> HTTPStreamRead {
        // While its replay goes out the stream is the hub's like any other: cut when its client reads
        // nothing and the budget is spent, and then it sends nothing more.
        if replays != nil, prefix.withLock({ $0.sent < $0.bytes.count }), !hub.sendsPrefix(id, connection: connection) {
            return hub.read(id, into: buffer, connection: connection)
        }
        let copied = prefix.withLock { prefix -> Int in
            guard prefix.sent < prefix.bytes.count else { return 0 }
            let count = min(buffer.count, prefix.bytes.count - prefix.sent)
            prefix.bytes.withUnsafeBytes { bytes in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[prefix.sent..<prefix.sent + count]))
            }
            prefix.sent += count
            replays?.release(count)
            if prefix.sent == prefix.bytes.count { prefix.bytes = [] }
            return count
        }
        if copied > 0 { return .bytes(copied) }
        return hub.read(id, into: buffer, connection: connection)
    }

    /// Called once, on a libmicrohttpd worker thread, however the stream ended (its client left, it was
    /// cut or revoked, the server stopped, or its response could not be queued).
    func close() {
        let unsent = prefix.withLock { prefix in
            defer { prefix = ([], 0) }
            return max(0, prefix.bytes.count - prefix.sent)
        }
        replays?.release(unsent)
        hub.close(id)
        hold?.release()
        // Outside the hub's lock: leaving a room writes its model, which the hub then publishes.
        ended?()
    }
}

/// The bytes of history replays (`/events?since=`) built and not yet sent: charged to the hub's one
/// budget for everything streams hold unsent (`--max-unsent-bytes`, see `EventHub.reserve`), so that
/// replays and the hub's frames together stay under it.
final class ReplayBudget: Sendable {
    let hub: EventHub

    init(hub: EventHub) { self.hub = hub }

    /// Takes `count` bytes, or throws when they would pass the budget (503), or reach it alone (413).
    func take(_ count: Int) throws(RequestError) {
        try hub.reserve(count)
    }

    func release(_ count: Int) {
        hub.release(count)
    }
}
