internal import CNATS
import Foundation
import LiveBindEngine

/// What became of one JetStream publish.
enum PublishOutcome: Sendable, Equatable {
    /// Stored at `sequence` (`duplicate`: an earlier try with the same message id was, and this is its sequence).
    case stored(sequence: UInt64, duplicate: Bool)
    /// Refused: the stream's last sequence is not the one expected (jsErrCode 10071): another writer came first.
    case wrongLastSequence
    /// No answer: no stream leader (an election), no connection, or a timeout. The message may or may
    /// not be stored: retry with the same message id.
    case unavailable(String)
    /// Refused for another reason (too large, a bad header): retrying does not help.
    case refused(String)
}

extension NATSConnection {
    /// Makes the stream `name` holding `subjects` unless it exists, on file storage with `replicas`
    /// copies, deduplicating message ids for two minutes, and bounded to `maxMessages` (-1: unbounded)
    /// and `maxBytes` (-1: unbounded), dropping the oldest. Returns its last sequence.
    func ensureStream(_ name: String, subjects: [String], replicas: Int, maxMessages: Int64, maxBytes: Int64)
        throws(ClusterError) -> UInt64
    {
        if let last = try streamLastSequence(name) { return last }
        var config = jsStreamConfig()
        jsStreamConfig_Init(&config)
        let cName = strdup(name)
        defer { free(cName) }
        var cSubjects = subjects.map { UnsafePointer<CChar>?(strdup($0)) }
        defer { cSubjects.forEach { free(UnsafeMutablePointer(mutating: $0)) } }
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(rawValue: 0)
        let status = cSubjects.withUnsafeMutableBufferPointer { list in
            config.Name = UnsafePointer(cName)
            config.Subjects = list.baseAddress
            config.SubjectsLen = Int32(list.count)
            config.Storage = js_FileStorage
            config.Replicas = Int64(replicas)
            config.Duplicates = 120_000_000_000
            config.MaxMsgs = maxMessages
            config.MaxBytes = maxBytes
            config.Discard = js_DiscardOld
            return js_AddStream(&info, jetStream, &config, nil, &code)
        }
        jsStreamInfo_Destroy(info)
        if status != NATS_OK {
            // Another node may have made it at the same moment.
            if let last = try streamLastSequence(name) { return last }
            throw .unavailable("cannot make the stream \(name): \(Self.text(status)) (\(code.rawValue))")
        }
        return 0
    }

    /// The last message on `subject` of `stream`, nil when there is none (or no such stream). The
    /// corresponding C function is `js_GetLastMsg`.
    func lastMessage(_ stream: String, subject: String, headers names: [String]) throws(ClusterError) -> StreamMessage? {
        var message: OpaquePointer?
        var code = jsErrCode(rawValue: 0)
        let status = js_GetLastMsg(&message, jetStream, stream, subject, nil, &code)
        defer { natsMsg_Destroy(message) }
        if status == NATS_NOT_FOUND || code.rawValue == 10037 || code.rawValue == 10059 { return nil }
        guard status == NATS_OK, let message else {
            throw .unavailable("cannot read the last message of \(stream): \(Self.text(status)) (\(code.rawValue))")
        }
        return StreamMessage(copying: message, sequence: 0, pending: 0, headers: names)
    }

    /// Removes the message at `sequence` of `stream` (nothing when it is gone already). The corresponding
    /// C function is `js_DeleteMsg`.
    func deleteMessage(_ stream: String, sequence: UInt64) throws(ClusterError) {
        var code = jsErrCode(rawValue: 0)
        let status = js_DeleteMsg(jetStream, stream, sequence, nil, &code)
        if status == NATS_OK || status == NATS_NOT_FOUND || code.rawValue == 10037 { return }
        throw .unavailable("cannot delete message \(sequence) of \(stream): \(Self.text(status)) (\(code.rawValue))")
    }

    /// Removes the messages on `subject` of `stream` before `sequence`, or all but the last `keep`
    /// (neither: all of them).
    /// The corresponding C function is `js_PurgeStream`.
    func purge(_ stream: String, subject: String, before sequence: UInt64 = 0, keep: UInt64 = 0) throws(ClusterError) {
        var options = jsOptions()
        jsOptions_Init(&options)
        // Purging hundreds of megabytes of chunks takes the server longer than the default 5 s.
        options.Wait = 60_000
        var code = jsErrCode(rawValue: 0)
        let status = subject.withCString { cSubject in
            options.Stream.Purge.Subject = cSubject
            options.Stream.Purge.Sequence = sequence
            options.Stream.Purge.Keep = keep
            return js_PurgeStream(jetStream, stream, &options, &code)
        }
        guard status == NATS_OK else {
            throw .unavailable("cannot purge \(subject) of \(stream): \(Self.text(status)) (\(code.rawValue))")
        }
    }

    /// Lifts the message-count bound of `stream` when it has one (streams made by earlier versions).
    /// The corresponding C functions are `js_GetStreamInfo` and `js_UpdateStream`.
    func removeMessageLimit(_ stream: String) throws(ClusterError) {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(rawValue: 0)
        let status = js_GetStreamInfo(&info, jetStream, stream, nil, &code)
        defer { jsStreamInfo_Destroy(info) }
        guard status == NATS_OK, let info, let config = info.pointee.Config else {
            throw .unavailable("cannot read the stream \(stream): \(Self.text(status))")
        }
        guard config.pointee.MaxMsgs >= 0 else { return }
        config.pointee.MaxMsgs = -1
        var updated: UnsafeMutablePointer<jsStreamInfo>?
        let update = js_UpdateStream(&updated, jetStream, config, nil, &code)
        jsStreamInfo_Destroy(updated)
        guard update == NATS_OK else {
            throw .unavailable("cannot update the stream \(stream): \(Self.text(update)) (\(code.rawValue))")
        }
    }

    /// The stream's last sequence, nil when it does not exist.
    func streamLastSequence(_ name: String) throws(ClusterError) -> UInt64? {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(rawValue: 0)
        let status = js_GetStreamInfo(&info, jetStream, name, nil, &code)
        defer { jsStreamInfo_Destroy(info) }
        if status == NATS_NOT_FOUND || code.rawValue == 10059 { return nil }
        guard status == NATS_OK, let info else {
            throw .unavailable("cannot read the stream \(name): \(Self.text(status))")
        }
        return info.pointee.State.LastSeq
    }

    /// The stream's first retained sequence and its last one (0, 0 when it does not exist).
    func streamBounds(_ name: String) throws(ClusterError) -> (first: UInt64, last: UInt64) {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(rawValue: 0)
        let status = js_GetStreamInfo(&info, jetStream, name, nil, &code)
        defer { jsStreamInfo_Destroy(info) }
        guard status == NATS_OK, let info else {
            throw .unavailable("cannot read the stream \(name): \(Self.text(status))")
        }
        return (info.pointee.State.FirstSeq, info.pointee.State.LastSeq)
    }

    /// Publishes `body` on `subject` with `headers` and waits up to `timeout` milliseconds for the
    /// stream's answer. The corresponding C function is `js_PublishMsg`.
    func publish(_ subject: String, headers: [(String, String)], body: [UInt8], timeout: Int64) -> PublishOutcome {
        var message: OpaquePointer?
        let made = body.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                natsMsg_Create(&message, subject, nil, chars.baseAddress, Int32(chars.count))
            }
        }
        guard made == NATS_OK, let message else { return .refused("cannot make a message: \(Self.text(made))") }
        defer { natsMsg_Destroy(message) }
        for (name, value) in headers where natsMsgHeader_Set(message, name, value) != NATS_OK {
            return .refused("cannot set the header \(name)")
        }
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        options.MaxWait = timeout
        var ack: UnsafeMutablePointer<jsPubAck>?
        var code = jsErrCode(rawValue: 0)
        let status = js_PublishMsg(&ack, jetStream, message, &options, &code)
        defer { jsPubAck_Destroy(ack) }
        if status == NATS_OK, let ack {
            return .stored(sequence: ack.pointee.Sequence, duplicate: ack.pointee.Duplicate)
        }
        if code == JSStreamWrongLastSequenceErr { return .wrongLastSequence }
        switch status {
        case NATS_TIMEOUT, NATS_NO_RESPONDERS, NATS_CONNECTION_CLOSED, NATS_CONNECTION_DISCONNECTED, NATS_IO_ERROR,
            NATS_NOT_FOUND, NATS_STALE_CONNECTION:
            return .unavailable(Self.text(status))
        default:
            // JetStream errors during an election (10076 "not enabled", cluster not available) pass too.
            if code == JSNotEnabledErr || code == JSClusterNotAvailErr || code.rawValue == 10008 || code.rawValue == 0 {
                return .unavailable("\(Self.text(status)) (\(code.rawValue))")
            }
            return .refused("\(Self.text(status)) (\(code.rawValue))")
        }
    }
}
