extension MicroHTTPDDaemon {
    /// The beginnings of libmicrohttpd 0.9.75's messages about a client that went away or failed its TLS
    /// handshake: ordinary on
    /// any server with browsers and event streams, so they are logged at debug level, not as warnings.
    static let clientDisconnectMessages = [
        "The socket is no longer available for sending",
        "The connection was forcibly closed by remote peer",
        "Socket has been disconnected when reading request",
        "Connection socket is closed when reading request",
        "Connection was closed by remote side with incomplete request",
        "Failed to send data in request for",
        "Failed to send the response headers for the request",
        "Failed to send the response body for the request",
        "Failed to send the chunked response body for the request",
        "Failed to send the footers for the request",
        // A TLS handshake the client broke off or garbled (plain HTTP sent to the HTTPS port, a scanner):
        // the client's fault, and one line per attempt would let anyone fill the log.
        "Error: received handshake message out of context",
        "Error: received alert from remote side",
        "Error in TLS handshake",
        // A client past --max-connections-per-address, closed at once: one line per attempt would let
        // it fill the log. (At the server-wide limit 0.9.75 stops accepting instead, without this line.)
        "Server reached connection limit"
    ]

    /// Whether a libmicrohttpd log message only says that a client disconnected.
    static func isClientDisconnect(_ message: String) -> Bool {
        clientDisconnectMessages.contains { message.hasPrefix($0) }
    }
}
