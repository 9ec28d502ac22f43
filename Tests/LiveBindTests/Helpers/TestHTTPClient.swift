import Foundation

/// A response as a test sees it.
struct TestHTTPResponse {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    /// The first header called `name` (case-insensitive).
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The body as UTF-8 text.
    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed with Foundation's JSON parser (independent of the engine's).
    func json() throws -> Any { try JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) }

    /// The body as a JSON object.
    func object() throws -> [String: Any] {
        guard let object = try json() as? [String: Any] else { throw TestSocketError(description: "not an object: \(text)") }
        return object
    }
}

/// A tiny HTTP/1.1 client on raw sockets: one request per connection, `Content-Length` or chunked bodies.
enum TestHTTPClient {
    /// Sends one request and reads the whole response.
    static func request(
        port: Int, _ method: String, _ target: String, headers: [(String, String)] = [],
        body: [UInt8]? = nil, timeout: Double = 10
    ) throws -> TestHTTPResponse {
        let socket = try TestSocket(port: port, timeout: timeout)
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body, !headers.contains(where: { $0.0.lowercased() == "transfer-encoding" }) {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        try socket.send(Array(head.utf8) + (body ?? []))
        return try readResponse(from: socket, method: method)
    }

    /// Sends one request with a UTF-8 body.
    static func request(
        port: Int, _ method: String, _ target: String, headers: [(String, String)] = [],
        text: String, timeout: Double = 10
    ) throws -> TestHTTPResponse {
        try request(port: port, method, target, headers: headers, body: Array(text.utf8), timeout: timeout)
    }

    /// Reads a status line, headers and body from an open socket.
    static func readResponse(from socket: TestSocket, method: String = "GET") throws -> TestHTTPResponse {
        let (status, headers) = try readHead(from: socket)
        let response = TestHTTPResponse(status: status, headers: headers, body: [])
        if method == "HEAD" || status == 204 || status == 304 { return response }
        var body: [UInt8] = []
        if response.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
            while let chunk = try readChunk(from: socket) { body += chunk }
        } else if let length = response.header("Content-Length").flatMap({ Int($0) }) {
            body = try socket.read(count: length)
        } else {
            body = try socket.readToEnd()
        }
        return TestHTTPResponse(status: status, headers: headers, body: body)
    }

    /// Reads the status line and header fields.
    static func readHead(from socket: TestSocket) throws -> (Int, [(name: String, value: String)]) {
        let statusLine = try socket.readLine()
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else {
            throw TestSocketError(description: "bad status line: \(statusLine)")
        }
        var headers: [(name: String, value: String)] = []
        while true {
            let line = try socket.readLine()
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append(
                (
                    String(line[..<colon]),
                    line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                ))
        }
        return (status, headers)
    }

    /// Reads one chunk of a chunked body; nil after the last (zero-size) chunk and its trailer.
    static func readChunk(from socket: TestSocket) throws -> [UInt8]? {
        let sizeLine = try socket.readLine()
        guard let size = Int(sizeLine.split(separator: ";").first ?? "", radix: 16) else {
            throw TestSocketError(description: "bad chunk size line: \(sizeLine)")
        }
        if size == 0 {
            while try !socket.readLine().isEmpty {}
            return nil
        }
        let data = try socket.read(count: size)
        let end = try socket.readLine()
        guard end.isEmpty else { throw TestSocketError(description: "chunk of \(size) bytes runs on: \(end)") }
        return data
    }
}
