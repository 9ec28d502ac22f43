/// One `GET /events` response body: reads its subscriber's frames from the hub.
final class EventStream: HTTPStreamBody {
    let hub: EventHub
    let id: Int
    /// The stream's share of its client address (`--max-streams-per-address`), given back at its end.
    let hold: AddressQuota.Hold?

    init(hub: EventHub, id: Int, hold: AddressQuota.Hold? = nil) {
        self.hub = hub
        self.id = id
        self.hold = hold
    }

    /// Called on a libmicrohttpd worker thread.
    func read(into buffer: UnsafeMutableRawBufferPointer, connection: any HTTPStreamConnection) -> HTTPStreamRead {
        hub.read(id, into: buffer, connection: connection)
    }

    /// Called once, on a libmicrohttpd worker thread, however the stream ended (its client left, it was
    /// cut or revoked, the server stopped, or its response could not be queued).
    func close() {
        hub.close(id)
        hold?.release()
    }
}
