internal import CMicroHTTPD

/// A libmicrohttpd connection handle as a stream body sees it: suspend and resume.
///
/// The pointer stays valid while a response is queued on it (the stream's `close` comes before the
/// connection is freed), which is all a stream ever uses it for.
struct MicroHTTPDConnection: HTTPStreamConnection, @unchecked Sendable {
    let pointer: OpaquePointer

    /// Parks the connection. The corresponding C function is `MHD_suspend_connection`.
    func suspend() { MHD_suspend_connection(pointer) }

    /// Wakes the connection (thread-safe). The corresponding C function is `MHD_resume_connection`.
    func resume() { MHD_resume_connection(pointer) }
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
