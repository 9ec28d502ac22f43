/// One `GET /events` response body: reads its subscriber's frames from the hub.
final class EventStream: HTTPStreamBody {
    let hub: EventHub
    let id: Int

    init(hub: EventHub, id: Int) {
        self.hub = hub
        self.id = id
    }

    /// Called on a libmicrohttpd worker thread.
    func read(into buffer: UnsafeMutableRawBufferPointer, connection: any HTTPStreamConnection) -> HTTPStreamRead {
        hub.read(id, into: buffer, connection: connection)
    }

    /// Called once, on a libmicrohttpd worker thread.
    func close() { hub.close(id) }
}
