import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Why a test-side socket operation failed.
struct TestSocketError: Error, CustomStringConvertible {
    var description: String
}

/// A blocking TCP connection to 127.0.0.1 with receive/send timeouts, and a read buffer.
final class TestSocket {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var position = 0

    /// Connects to 127.0.0.1:`port`; reads and writes give up after `timeout` seconds.
    /// A `receiveBufferSize` (set before connecting, so the TCP window stays small) makes a client
    /// that does not read fill up quickly.
    init(port: Int, timeout: Double = 10, receiveBufferSize: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSocketError(description: "socket: errno \(errno)") }
        if var size = receiveBufferSize {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            // No close here: every property is set, so throwing runs `deinit`, which closes `fd`. A
            // second close could close a descriptor another test's thread has opened meanwhile.
            throw TestSocketError(description: "connect to port \(port): errno \(code)")
        }
    }

    deinit { close(fd) }

    /// Sends all bytes.
    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw TestSocketError(description: "send: errno \(errno)") }
            sent += count
        }
    }

    /// Sends a string as UTF-8.
    func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Reads more bytes into the buffer; false at end of stream. Throws on timeout.
    private func fill() throws -> Bool {
        if position > 0 && position == buffer.count { buffer.removeAll(keepingCapacity: true); position = 0 }
        var chunk = [UInt8](repeating: 0, count: 16384)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0 {
            let code = errno
            throw TestSocketError(description: code == EAGAIN ? "read timed out" : "recv: errno \(code)")
        }
        if count == 0 { return false }
        buffer.append(contentsOf: chunk.prefix(count))
        return true
    }

    /// Reads up to and including CRLF; returns the line without it.
    func readLine() throws -> String {
        while true {
            if let end = buffer[position...].firstIndex(of: 10) {
                var line = buffer[position..<end]
                if line.last == 13 { line = line.dropLast() }
                position = end + 1
                return String(decoding: line, as: UTF8.self)
            }
            guard try fill() else { throw TestSocketError(description: "connection closed mid-line") }
        }
    }

    /// Reads exactly `count` bytes.
    func read(count: Int) throws -> [UInt8] {
        while buffer.count - position < count {
            guard try fill() else { throw TestSocketError(description: "connection closed mid-body") }
        }
        defer { position += count }
        return Array(buffer[position..<position + count])
    }

    /// Reads until the peer closes.
    func readToEnd() throws -> [UInt8] {
        while try fill() {}
        defer { position = buffer.count }
        return Array(buffer[position...])
    }

    /// Reads and drops everything until the peer closes; throws if that takes longer than the timeout.
    func waitForClose() throws {
        while try fill() { position = buffer.count }
    }

    /// Reads what arrived so far, up to `limit` bytes, waiting at most the socket's timeout for the
    /// first; empty at end of stream. Bypasses the line buffer (for raw byte-level readers).
    func receive(upTo limit: Int) throws -> [UInt8] {
        if position < buffer.count {
            let count = min(limit, buffer.count - position)
            defer { position += count }
            return Array(buffer[position..<position + count])
        }
        var chunk = [UInt8](repeating: 0, count: max(1, limit))
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0 {
            let code = errno
            throw TestSocketError(description: code == EAGAIN ? "read timed out" : "recv: errno \(code)")
        }
        return Array(chunk.prefix(count))
    }
}
