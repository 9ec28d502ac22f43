/// What a stream body produced for one read.
package enum HTTPStreamRead: Sendable, Equatable {
    /// `count` bytes were written into the buffer.
    case bytes(Int)
    /// Nothing to send now; the stream called `connection.suspend()` and will resume it later.
    case suspended
    /// The stream is over; the response ends.
    case end
}

/// The connection a stream body writes to, as far as the stream needs it.
///
/// > Important: `suspend()` may only be called from inside `HTTPStreamBody.read(into:connection:)`.
/// `resume()` may be called from any thread, and only for a connection that is suspended.
package protocol HTTPStreamConnection: Sendable {
    /// Parks the connection until `resume()`; the server stops polling it.
    func suspend()
    /// Wakes a parked connection; its stream is read again soon after.
    func resume()
}

/// A stream connection that can send a few bytes while it is suspended, straight to its socket,
/// without waking it: what makes a heartbeat to thousands of idle streams cheap.
///
/// The caller must own the suspension (the connection is suspended and nobody resumes it meanwhile).
package protocol SuspendedStreamWriting: HTTPStreamConnection {
    /// Sends `bytes` as the next piece of the response body if the socket takes all of them at once;
    /// false when it did not send them (the caller then resumes and lets the server send them).
    /// A connection whose socket took only part of them is shut, so the resumed stream ends.
    func sendWhileSuspended(_ bytes: [UInt8]) -> Bool
}

/// An open-ended response body, such as an event stream.
///
/// The server calls `read` when the socket can take more bytes, on one of its worker threads, and
/// `close` exactly once when the response is finished or the client went away.
package protocol HTTPStreamBody: AnyObject, Sendable {
    /// Fills `buffer` with the next bytes, or suspends, or ends. Called on a libmicrohttpd worker thread.
    func read(into buffer: UnsafeMutableRawBufferPointer, connection: any HTTPStreamConnection) -> HTTPStreamRead
    /// Releases the stream; called once, on a libmicrohttpd worker thread.
    func close()
}

/// A stream connection the server can close from another thread, even while libmicrohttpd waits for
/// its client to read: what lets a stream whose client reads nothing be cut before its idle timeout.
///
/// The caller must know the connection is still open (its stream has not been closed).
package protocol ClosableStreamConnection: HTTPStreamConnection {
    /// Shuts the socket in both directions; the server then ends the response and closes the stream.
    func close()
    /// Bytes the socket has yet to send or see acknowledged by its peer (nil when not known): a peer
    /// that acknowledges nothing for a while is gone, whether or not its application reads.
    var unacknowledgedBytes: Int? { get }
}
