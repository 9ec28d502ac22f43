internal import CMicroHTTPD
import Logging
#if canImport(Glibc)
import Glibc
#endif

// MARK: - C callback trampolines -------------------------------------------------------------------
//
// Every function libmicrohttpd calls back lives in this section. Each is a non-capturing closure
// (`@convention(c)`); context arrives through `void *` as an `Unmanaged` reference. Nothing throws
// across the C boundary. All are called on a libmicrohttpd worker thread.

/// The accept policy: a connection accepted after ``MicroHTTPDDaemon/quiesce()`` is closed at once.
let acceptPolicyTrampoline: MHD_AcceptPolicyCallback = { context, _, _ in
    guard let context else { return .NO }
    let daemon = Unmanaged<MicroHTTPDDaemon>.fromOpaque(context).takeUnretainedValue()
    return daemon.accepting.load(ordering: .relaxed) ? .YES : .NO
}

/// The access handler: called with headers, then once per body piece, then a last time with size 0.
let accessHandlerTrampoline: MHD_AccessHandlerCallback = {
    context, connection, url, method, version, uploadData, uploadDataSize, requestContext in
    guard let context, let connection, let uploadDataSize, let requestContext else { return .NO }
    let daemon = Unmanaged<MicroHTTPDDaemon>.fromOpaque(context).takeUnretainedValue()
    guard let opaque = requestContext.pointee else {
        let head = daemon.makeRequestHead(connection: connection, url: url, method: method)
        if let failure = daemon.earlyFailure(for: head, url: url, version: version) {
            return daemon.queue(daemon.handlers.reject(head, failure), on: connection, version: version)
        }
        let pending = MicroHTTPDPendingRequest(request: head, bodyLimit: daemon.options.bodyLimit)
        requestContext.pointee = Unmanaged.passRetained(pending).toOpaque()
        return .YES
    }
    let pending = Unmanaged<MicroHTTPDPendingRequest>.fromOpaque(opaque).takeUnretainedValue()
    if let deferred = pending.deferred {
        // Resumed: the answer is known (the connection is resumed only then).
        guard let response = deferred.response else { return .NO }
        pending.deferred = nil
        daemon.deferredAnswers.subtract(1, ordering: .releasing)
        daemon.deferredAnswered.notify()
        return daemon.queue(response, on: connection, version: version)
    }
    let size = uploadDataSize.pointee
    if size > 0 {
        uploadDataSize.pointee = 0
        let keepGoing = pending.append(UnsafeRawBufferPointer(start: uploadData, count: size))
        return keepGoing ? .YES : .NO
    }
    let response =
        if let failure = pending.failure {
            daemon.handlers.reject(pending.request, failure)
        } else {
            daemon.handlers.respond(pending.request)
        }
    if case .stream = response.body { pending.answeredWithStream() }
    if let deferred = response.deferred {
        // Counted before `accepting` is read, and `quiesce` clears that before `stop` waits for the
        // count: either the stop waits for this answer, or this worker sees the daemon stopping.
        daemon.deferredAnswers.add(1, ordering: .sequentiallyConsistent)
        guard daemon.accepting.load(ordering: .sequentiallyConsistent) else {
            // Stopping: a connection still suspended when the daemon stops aborts the process, so
            // this worker waits for the answer itself (the commit log still runs); past the bound
            // the connection closes unanswered.
            defer {
                daemon.deferredAnswers.subtract(1, ordering: .releasing)
                daemon.deferredAnswered.notify()
            }
            guard let answer = deferred.wait(atMost: MicroHTTPDDaemon.stoppingAnswerWait) else { return .NO }
            return daemon.queue(answer, on: connection, version: version)
        }
        pending.deferred = deferred
        deferred.suspend(MicroHTTPDConnection(pointer: connection, version: ""))
        return .YES
    }
    return daemon.queue(response, on: connection, version: version)
}

/// Frees the per-request context when a request is finished, whatever the reason; counts streams
/// the idle timeout closed (their client stopped reading) and restarts the next request's deadline.
let requestCompletedTrampoline: MHD_RequestCompletedCallback = { context, connection, requestContext, code in
    if let context, let connection {
        let daemon = Unmanaged<MicroHTTPDDaemon>.fromOpaque(context).takeUnretainedValue()
        if let clock = MicroHTTPDDaemon.deadlineClock(of: connection) { daemon.deadlines.completed(clock) }
        if code == .REQUEST_TERMINATED_TIMEOUT_REACHED, let opaque = requestContext?.pointee,
            Unmanaged<MicroHTTPDPendingRequest>.fromOpaque(opaque).takeUnretainedValue().isStream
        {
            daemon.counters.stalledStreamsClosed.add(1, ordering: .relaxed)
        }
    }
    guard let requestContext, let opaque = requestContext.pointee else { return }
    Unmanaged<MicroHTTPDPendingRequest>.fromOpaque(opaque).release()
    requestContext.pointee = nil
}

/// As a socket opens: bounds its kernel send buffer, so stalled readers cannot hold megabytes, and
/// starts its request deadline. As it closes (before libmicrohttpd closes the socket): forgets it.
/// The connection's deadline clock lives in its socket context, retained until it closes.
let connectionNotifyTrampoline: MHD_NotifyConnectionCallback = { context, connection, socketContext, code in
    guard let context, let connection else { return }
    let daemon = Unmanaged<MicroHTTPDDaemon>.fromOpaque(context).takeUnretainedValue()
    guard code == .CONNECTION_NOTIFY_STARTED else {
        daemon.deadlines.closed(Int(bitPattern: connection))
        if let socketContext, let clock = socketContext.pointee {
            Unmanaged<RequestDeadlines.Clock>.fromOpaque(clock).release()
            socketContext.pointee = nil
        }
        return
    }
    var size = Int32(clamping: daemon.options.sendBufferSize)
    let fd = livebind_connection_fd(connection)
    if size > 0, fd >= 0 {
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
    if fd >= 0, let socketContext {
        let clock = daemon.deadlines.opened(Int(bitPattern: connection), socket: fd)
        socketContext.pointee = Unmanaged.passRetained(clock).toOpaque()
    }
}

/// libmicrohttpd's error log, formatted with `vsnprintf` and sent to swift-log.
let errorLogTrampoline: MHD_LogCallback = { context, format, arguments in
    guard let context, let format, let arguments else { return }
    let daemon = Unmanaged<MicroHTTPDDaemon>.fromOpaque(context).takeUnretainedValue()
    var buffer = [CChar](repeating: 0, count: 512)
    _ = vsnprintf(&buffer, buffer.count, format, arguments)
    let message = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let isDisconnect = MicroHTTPDDaemon.isClientDisconnect(message)
    // Thousands of streams can go away at once: skip the redaction when the line would be dropped.
    if isDisconnect && daemon.logger.logLevel > .debug { return }
    let line = "libmicrohttpd: \(daemon.handlers.redactLog(message.trimmingCharacters(in: "\n")))"
    if isDisconnect { daemon.logger.debug("\(line)") } else { daemon.logger.warning("\(line)") }
}

/// Reads the next bytes of a stream body. Returning 0 is only allowed after suspending.
let streamReaderTrampoline: MHD_ContentReaderCallback = { context, _, buffer, max in
    guard let context, let buffer else { return -2 }  // MHD_CONTENT_READER_END_WITH_ERROR
    let stream = Unmanaged<MicroHTTPDStreamContext>.fromOpaque(context).takeUnretainedValue()
    let target = UnsafeMutableRawBufferPointer(start: buffer, count: max)
    switch stream.body.read(into: target, connection: stream.connection) {
    case .bytes(let count): return count
    case .suspended: return 0
    case .end: return -1  // MHD_CONTENT_READER_END_OF_STREAM
    }
}

/// Releases a stream body when its response is destroyed (finished or client gone).
let streamFreeTrampoline: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    let stream = Unmanaged<MicroHTTPDStreamContext>.fromOpaque(context).takeRetainedValue()
    stream.body.close()
}

/// Collects one header or query argument into the `[(String, String)]` behind `context`.
/// Percent-decodes a URL or query component in place and returns its new length.
///
/// libmicrohttpd's own decoder turns `%00` into a NUL that silently cuts the string (`/%00index.html`
/// would read as `/`). Here `%00` becomes the bytes C0 80, which are not UTF-8, so the request is refused
/// as malformed instead of being truncated. A `%` not followed by two hex digits stays as it is.
let unescapeTrampoline: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<CChar>?) -> Int = {
    _, _, string in
    guard let string else { return 0 }
    var read = 0
    var write = 0
    while string[read] != 0 {
        if string[read] == CChar(UInt8(ascii: "%")),
            let high = FormDecoding.hex(UInt8(bitPattern: string[read + 1])),
            let low = FormDecoding.hex(UInt8(bitPattern: string[read + 2]))
        {
            let decoded = high << 4 | low
            if decoded == 0 {
                string[write] = CChar(bitPattern: 0xC0)
                string[write + 1] = CChar(bitPattern: 0x80)
                write += 2
            } else {
                string[write] = CChar(bitPattern: decoded)
                write += 1
            }
            read += 3
        } else {
            string[write] = string[read]
            write += 1
            read += 1
        }
    }
    string[write] = 0
    return write
}

let keyValueTrampoline: MHD_KeyValueIterator = { context, _, key, value in
    guard let context, let key else { return .YES }
    let pairs = context.assumingMemoryBound(to: [(name: String, value: String)].self)
    pairs.pointee.append((String(cString: key), value.map { String(cString: $0) } ?? ""))
    return .YES
}

extension String {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var copy = Substring(self)
        while copy.last == set { copy.removeLast() }
        return String(copy)
    }
}
