internal import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif

extension MicroHTTPDDaemon {
    /// The request line and headers, before any body. Called on a libmicrohttpd worker thread.
    func makeRequestHead(
        connection: OpaquePointer, url: UnsafePointer<CChar>?,
        method: UnsafePointer<CChar>?
    ) -> HTTPRequest {
        var headers: [(name: String, value: String)] = []
        // One allocation for a usual request's fields instead of one per doubling.
        headers.reserveCapacity(8)
        withUnsafeMutablePointer(to: &headers) { pointer in
            _ = MHD_get_connection_values(connection, .HEADER_KIND, keyValueTrampoline, UnsafeMutableRawPointer(pointer))
        }
        var query: [(name: String, value: String)] = []
        withUnsafeMutablePointer(to: &query) { pointer in
            _ = MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, keyValueTrampoline, UnsafeMutableRawPointer(pointer))
        }
        let headerList = HTTPHeaders(fields: headers)
        let path = url.map { String(cString: $0) } ?? "/"
        var request = HTTPRequest(
            method: HTTPMethod(rawValue: method.map { String(cString: $0) } ?? "GET"),
            path: path.isEmpty ? "/" : path, query: query, headers: headerList)
        if options.clientAddresses.covers(request.path) { request.clientAddress = Self.peerAddress(connection) }
        if options.certificate != nil { request.scheme = "https" }
        return request
    }

    /// The numeric address of the connection's peer. The corresponding C functions are `getpeername`
    /// and `inet_ntop`.
    private static func peerAddress(_ connection: OpaquePointer) -> String? {
        let fd = livebind_connection_fd(connection)
        guard fd >= 0 else { return nil }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let found = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard found == 0 else { return nil }
        let family = Int32(storage.ss_family)
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let written: UnsafePointer<CChar>? = withUnsafePointer(to: storage) { pointer in
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var bytes = address.pointee.sin6_addr
                    return inet_ntop(AF_INET6, &bytes, &text, socklen_t(text.count))
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                var bytes = address.pointee.sin_addr
                return inet_ntop(AF_INET, &bytes, &text, socklen_t(text.count))
            }
        }
        guard written != nil, let end = text.firstIndex(of: 0) else { return nil }
        return String(decoding: text[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A refusal decided from the request line and headers alone: a URL that is not UTF-8 (or held `%00`),
    /// framing in doubt (`RequestFraming`), HTTP/1.1 without `Host`, a body announced too large, or no
    /// length at all.
    func earlyFailure(
        for head: HTTPRequest, url: UnsafePointer<CChar>?,
        version: UnsafePointer<CChar>?
    ) -> HTTPTransportFailure? {
        if let url, String(validatingCString: url) == nil {
            return .malformedRequest("the URL is not UTF-8 once decoded, or holds a NUL byte (%00)")
        }
        if let failure = RequestFraming.failure(in: head.headers) { return failure }
        if Self.isHTTP11(version), head.headers["Host"] == nil {
            return .malformedRequest("an HTTP/1.1 request needs a Host header")
        }
        if let length = head.headers["Content-Length"] {
            if let count = Int(length.trimmingWhitespace()), count > options.bodyLimit {
                return .bodyTooLarge(limit: options.bodyLimit)
            }
            return nil
        }
        let chunked = head.headers["Transfer-Encoding"]?.lowercased().contains("chunked") ?? false
        if head.method.expectsBody && !chunked { return .lengthRequired }
        return nil
    }

    /// Hands a response to libmicrohttpd. The corresponding C function is `MHD_queue_response`.
    func queue(_ response: HTTPResponse, on connection: OpaquePointer, version: UnsafePointer<CChar>?) -> MHD_Result {
        let made: OpaquePointer?
        switch response.body {
        case .bytes(let bytes):
            made = bytes.withUnsafeBytes { raw in
                MHD_create_response_from_buffer(
                    raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress),
                    .RESPMEM_MUST_COPY)
            }
        case .stream(let body):
            let handle = MicroHTTPDConnection(
                pointer: connection, version: version.map { String(cString: $0) } ?? "",
                sendsDirectly: options.certificate == nil)
            let context = MicroHTTPDStreamContext(body: body, connection: handle)
            let opaque = Unmanaged.passRetained(context).toOpaque()
            made = MHD_create_response_from_callback(
                livebind_size_unknown(), Self.streamBlockSize(handle.framing),
                streamReaderTrampoline, opaque, streamFreeTrampoline)
            if made == nil {
                Unmanaged<MicroHTTPDStreamContext>.fromOpaque(opaque).release()
                body.close()
            }
        }
        guard let made else { return .NO }
        for (name, value) in response.headers {
            _ = name.withCString { name in value.withCString { MHD_add_response_header(made, name, $0) } }
        }
        _ = MHD_add_response_header(made, "Server", options.serverHeader)
        let result = MHD_queue_response(connection, UInt32(response.status), made)
        MHD_destroy_response(made)
        if let clock = Self.deadlineClock(of: connection) { deadlines.responded(clock) }
        return result
    }

    /// The deadline clock the connection-notify callback gave the connection.
    static func deadlineClock(of connection: OpaquePointer) -> RequestDeadlines.Clock? {
        livebind_connection_context(connection).map { Unmanaged<RequestDeadlines.Clock>.fromOpaque($0).takeUnretainedValue() }
    }

    /// The size of the buffer a stream response gets of its own, which libmicrohttpd 0.9.75 zero-fills.
    ///
    /// Over HTTP/1.1 the body is chunked and the reader writes straight into the connection's write
    /// buffer: the response's own buffer is never used, and 4 kB of it per stream would be 4 kB of
    /// resident memory per stream for nothing. An HTTP/1.0 client (or a proxy speaking 1.0) gets an
    /// unchunked body read through that buffer, so it keeps a useful size.
    static func streamBlockSize(_ framing: MicroHTTPDConnection.Framing?) -> Int {
        framing == .chunked ? 64 : 4096
    }

    /// Whether libmicrohttpd's version string for a request is HTTP/1.1.
    private static func isHTTP11(_ version: UnsafePointer<CChar>?) -> Bool {
        version.map { strcmp($0, "HTTP/1.1") == 0 } ?? false
    }
}
