internal import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif

/// A libmicrohttpd connection handle as a stream body sees it: suspend, resume, and a direct send
/// while suspended.
///
/// The pointer and the socket stay valid while a response is queued on it (the stream's `close`
/// comes before the connection is freed), which is all a stream ever uses them for.
struct MicroHTTPDConnection: SuspendedStreamWriting, ClosableStreamConnection, @unchecked Sendable {
    /// How the response body goes on the wire.
    enum Framing {
        /// HTTP/1.1: libmicrohttpd sends an open-ended body in chunks.
        case chunked
        /// HTTP/1.0: the body is the bytes themselves, ended by closing the connection.
        case plain
    }

    let pointer: OpaquePointer
    /// The connection's socket, or -1 when libmicrohttpd did not say.
    let socket: Int32
    /// Nil for an HTTP version whose framing is not known here: such a stream never sends directly.
    let framing: Framing?
    /// Whether bytes may go straight to the socket: not over TLS, where they would bypass the
    /// encryption (and break the TLS record stream), so a TLS stream is resumed for its heartbeats.
    let sendsDirectly: Bool

    /// The connection a stream response is queued on; `version` is the request's HTTP version.
    init(pointer: OpaquePointer, version: String, sendsDirectly: Bool = true) {
        self.pointer = pointer
        self.sendsDirectly = sendsDirectly
        socket = livebind_connection_fd(pointer)
        framing =
            switch version {
            case "HTTP/1.1": .chunked
            case "HTTP/1.0": .plain
            default: nil
            }
    }

    /// Parks the connection. The corresponding C function is `MHD_suspend_connection`.
    func suspend() { MHD_suspend_connection(pointer) }

    /// Wakes the connection (thread-safe). The corresponding C function is `MHD_resume_connection`.
    func resume() { MHD_resume_connection(pointer) }

    /// Sends `bytes` (at most a few kB) in one `send`, framed as the next piece of the body.
    ///
    /// Safe only while the connection is suspended: libmicrohttpd then neither writes nor polls the
    /// socket, and a stream suspends only once everything it was given has gone to the kernel, so
    /// these bytes follow the ones before them. It sends nothing unless every earlier byte has been
    /// acknowledged: then the kernel takes a few bytes whole, or none. Should it take only part of
    /// them anyway, the socket is shut down: half a chunk would corrupt whatever followed.
    var unacknowledgedBytes: Int? {
        var unacknowledged: Int32 = 0  // TIOCOUTQ: what the socket has yet to send or see acknowledged
        guard socket >= 0, ioctl(socket, UInt(TIOCOUTQ), &unacknowledged) == 0 else { return nil }
        return Int(unacknowledged)
    }

    func sendWhileSuspended(_ bytes: [UInt8]) -> Bool {
        guard sendsDirectly, let framing, unacknowledgedBytes == 0 else { return false }
        let size = Array(String(bytes.count, radix: 16, uppercase: true).utf8)
        let total = framing == .chunked ? size.count + 2 + bytes.count + 2 : bytes.count
        let sent = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: total) { wire in
            var at = 0
            func put(_ part: [UInt8]) {
                for byte in part { wire[at] = byte; at += 1 }
            }
            if framing == .chunked { put(size); put(Self.lineEnd) }
            put(bytes)
            if framing == .chunked { put(Self.lineEnd) }
            return send(socket, wire.baseAddress, total, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        }
        if sent == total { return true }
        // Qualified: an unqualified SHUT_RDWR here hides the name from other files in a release build.
        if sent > 0 { _ = shutdown(socket, Int32(Glibc.SHUT_RDWR)) }
        return false
    }

    /// Shuts the socket down in both directions: libmicrohttpd sees the socket fail at its next event
    /// and closes the connection. The corresponding C function is `shutdown`.
    func close() {
        if socket >= 0 { _ = shutdown(socket, Int32(Glibc.SHUT_RDWR)) }
    }

    private static let lineEnd: [UInt8] = [13, 10]
}

/// The context libmicrohttpd hands back to the stream reader: the body and its connection.
final class MicroHTTPDStreamContext {
    let body: any HTTPStreamBody
    let connection: MicroHTTPDConnection

    init(body: any HTTPStreamBody, connection: MicroHTTPDConnection) {
        self.body = body
        self.connection = connection
    }
}
