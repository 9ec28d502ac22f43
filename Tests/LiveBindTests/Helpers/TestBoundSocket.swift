import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP connection to 127.0.0.1 from a chosen local address, such as the loopback alias 127.0.0.3
/// (Linux routes all of 127.0.0.0/8 to `lo` without setup): a test client the server sees at an
/// address of its own.
final class TestBoundSocket {
    let fd: Int32

    init(port: Int, from source: String, timeout: Int = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSocketError(description: "socket: errno \(errno)") }
        var time = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        var remote = local
        remote.sin_port = UInt16(port).bigEndian
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0 else { throw TestSocketError(description: "bind to \(source): errno \(errno)") }
        let connected = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) } }
        guard connected == 0 else { throw TestSocketError(description: "connect from \(source): errno \(errno)") }
    }

    deinit { close(fd) }

    /// Sends `GET target` with `headers` and reads what comes first: the answer's status, or nil when
    /// the server closed the connection unanswered. The rest is left unread (a stream stays open).
    func status(of target: String, headers: [(String, String)] = []) throws -> Int? {
        let fields = headers.map { "\($0.0): \($0.1)\r\n" }.joined()
        let request = Array("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(fields)\r\n".utf8)
        guard send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        if count < 0 && errno != ECONNRESET { throw TestSocketError(description: "recv: errno \(errno)") }
        guard count > 0 else { return nil }
        let line = String(decoding: buffer[..<count], as: UTF8.self).split(separator: "\r\n").first ?? ""
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }
}
