internal import CNATS
#if canImport(Glibc)
import Glibc
#endif
import LiveBindEngine

/// One connection to a NATS cluster with its JetStream context: the only type (with its extensions and
/// ``NATSSubscription``) that touches the C client.
///
/// libnats connections and JetStream contexts are safe to use from any thread; the handles are created
/// in `init` and destroyed in `deinit`, never replaced in between.
final class NATSConnection: @unchecked Sendable {
    // `@unchecked`: the handles are immutable after init and libnats locks internally.
    let connection: OpaquePointer
    let jetStream: OpaquePointer

    /// Connects to `servers` (`nats://host:port`), reconnecting forever (every 250 ms) after a loss, and
    /// noticing a dead server within about two seconds (pings every second, two unanswered).
    init(servers: [String], name: String) throws(ClusterError) {
        var options: OpaquePointer?
        try Self.check(natsOptions_Create(&options), "cannot make connection options")
        defer { natsOptions_Destroy(options) }
        var cStrings = servers.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        try cStrings.withUnsafeMutableBufferPointer { (buffer) throws(ClusterError) in
            try buffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) { (list) throws(ClusterError) in
                try Self.check(natsOptions_SetServers(options, list.baseAddress, Int32(list.count)), "invalid --cluster URL")
            }
        }
        try Self.check(natsOptions_SetName(options, name), "cannot name the connection")
        try Self.check(natsOptions_SetMaxReconnect(options, -1), "cannot set reconnects")
        try Self.check(natsOptions_SetReconnectWait(options, 250), "cannot set reconnect wait")
        try Self.check(natsOptions_SetPingInterval(options, 1000), "cannot set the ping interval")
        try Self.check(natsOptions_SetMaxPingsOut(options, 2), "cannot set the ping limit")
        try Self.check(natsOptions_SetTimeout(options, 2000), "cannot set the connect timeout")
        var made: OpaquePointer?
        try Self.check(natsConnection_Connect(&made, options), "cannot connect to \(servers.joined(separator: ","))")
        var context: OpaquePointer?
        var jsOptions = jsOptions()
        jsOptions_Init(&jsOptions)
        let status = natsConnection_JetStream(&context, made, &jsOptions)
        guard status == NATS_OK, let made, let context else {
            natsConnection_Destroy(made)
            throw .unavailable("cannot open JetStream: \(Self.text(status))")
        }
        connection = made
        jetStream = context
    }

    deinit {
        jsCtx_Destroy(jetStream)
        natsConnection_Close(connection)
        natsConnection_Destroy(connection)
    }

    /// The most bytes one message may hold, headers and body, on the server this connection is on
    /// (its `max_payload`; 1 MiB by default). The corresponding C function is `natsConnection_GetMaxPayload`.
    var maxPayload: Int {
        Int(natsConnection_GetMaxPayload(connection))
    }

    /// The bytes a message with `headers` and a body of `bodyCount` bytes counts against ``maxPayload``:
    /// the body and the header block (`NATS/1.0`, each `Name: Value` line, the blank line).
    static func messageSize(headers: [(String, String)], bodyCount: Int) -> Int {
        headers.reduce(12) { $0 + $1.0.utf8.count + $1.1.utf8.count + 4 } + bodyCount
    }

    /// Whether the connection is up now (not reconnecting or closed).
    var isConnected: Bool {
        natsConnection_Status(connection) == NATS_CONN_STATUS_CONNECTED
    }

    /// Closes the connection: blocked calls return, later ones fail. The handles stay valid until deinit.
    func close() {
        natsConnection_Close(connection)
    }

    /// Throws `.unavailable` with `what` and the client's text unless `status` is `NATS_OK`.
    static func check(_ status: natsStatus, _ what: String) throws(ClusterError) {
        guard status != NATS_OK else { return }
        throw .unavailable("\(what): \(text(status))")
    }

    /// The client's text for `status`, with its last error when that is more precise.
    static func text(_ status: natsStatus) -> String {
        var last = NATS_OK
        if let message = nats_GetLastError(&last), last == status, message.pointee != 0 { return String(cString: message) }
        return String(cString: natsStatus_GetText(status))
    }
}
