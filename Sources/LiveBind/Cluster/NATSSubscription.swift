import LiveBindEngine
internal import CNATS

/// One message of a stream, as an ordered consumer delivered it.
struct StreamMessage: Sendable {
    /// Its stream sequence.
    var sequence: UInt64
    /// How many messages the stream held after it when it was delivered.
    var pending: UInt64
    var subject: String
    var headers: [String: String]
    var body: [UInt8]
}

extension StreamMessage {
    /// A copy of `message`'s subject, body and the headers named `names` (those it has), so that the
    /// C message can be destroyed.
    init(copying message: OpaquePointer, sequence: UInt64, pending: UInt64, headers names: [String]) {
        var headers: [String: String] = [:]
        for name in names {
            var value: UnsafePointer<CChar>?
            if natsMsgHeader_Get(message, name, &value) == NATS_OK, let value { headers[name] = String(cString: value) }
        }
        let count = Int(natsMsg_GetDataLength(message))
        var body = [UInt8](repeating: 0, count: count)
        if count > 0, let data = natsMsg_GetData(message) {
            body.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(start: data, count: count)) }
        }
        self.init(
            sequence: sequence, pending: pending, subject: String(cString: natsMsg_GetSubject(message)),
            headers: headers, body: body)
    }
}

/// An ordered JetStream consumer read synchronously: every message of the stream from a start
/// sequence on, in order, with no gap and no duplicate (the client recreates the consumer after a
/// server loss; a heartbeat every second notices that quickly).
///
/// > Important: ``next(timeout:headers:)`` is called by one thread at a time.
final class NATSSubscription: @unchecked Sendable {
    // `@unchecked`: the handle is immutable after init; libnats locks internally.
    private let subscription: OpaquePointer
    /// Keeps the connection alive while the subscription is.
    private let connection: NATSConnection

    /// Subscribes to `subject` of `stream` from `startSequence` (at least 1).
    init(_ connection: NATSConnection, stream: String, subject: String, startSequence: UInt64) throws(ClusterError) {
        var options = jsSubOptions()
        jsSubOptions_Init(&options)
        options.Ordered = true
        options.Config.DeliverPolicy = js_DeliverByStartSequence
        options.Config.OptStartSeq = max(1, startSequence)
        options.Config.Heartbeat = 1_000_000_000
        var made: OpaquePointer?
        var code = jsErrCode(rawValue: 0)
        let status = stream.withCString { name in
            options.Stream = name
            return js_SubscribeSync(&made, connection.jetStream, subject, nil, &options, &code)
        }
        guard status == NATS_OK, let made else {
            throw .unavailable("cannot follow the stream \(stream): \(NATSConnection.text(status)) (\(code.rawValue))")
        }
        natsSubscription_SetPendingLimits(made, -1, -1)
        subscription = made
        self.connection = connection
    }

    deinit {
        natsSubscription_Unsubscribe(subscription)
        natsSubscription_Destroy(subscription)
    }

    /// The next message, waiting up to `timeout` milliseconds; nil when none came. Reads the values
    /// of the header names in `headers`.
    func next(timeout: Int64, headers names: [String]) -> StreamMessage? {
        var message: OpaquePointer?
        guard natsSubscription_NextMsg(&message, subscription, timeout) == NATS_OK, let message else { return nil }
        defer { natsMsg_Destroy(message) }
        var meta: UnsafeMutablePointer<jsMsgMetaData>?
        guard natsMsg_GetMetaData(&meta, message) == NATS_OK, let meta else { return nil }
        let sequence = meta.pointee.Sequence.Stream, pending = meta.pointee.NumPending
        jsMsgMetaData_Destroy(meta)
        return StreamMessage(copying: message, sequence: sequence, pending: pending, headers: names)
    }
}
