import Foundation
import Testing
@testable import LiveBind
#if canImport(Glibc)
import Glibc
#endif

/// `--max-connections-per-address` (libmicrohttpd's per-IP connection limit): one peer address
/// cannot take every connection. The clients connect from loopback aliases (127.0.0.3, 127.0.0.4),
/// which Linux routes to `lo` without any setup, so that the server sees two addresses.
@Suite("Connections per address") struct ConnectionsPerAddressTests {
    /// A TCP connection to 127.0.0.1 from a chosen local address.
    final class BoundSocket {
        let fd: Int32

        init(port: Int, from source: String) throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw TestSocketError(description: "socket: errno \(errno)") }
            var time = timeval(tv_sec: 5, tv_usec: 0)
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

        /// Asks for `/healthz`: the answer's status, or nil when the server closed the connection unanswered.
        func healthStatus() throws -> Int? {
            let request = Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
            guard send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else { return nil }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && errno != ECONNRESET { throw TestSocketError(description: "recv: errno \(errno)") }
            guard count > 0 else { return nil }
            let line = String(decoding: buffer[..<count], as: UTF8.self).split(separator: "\r\n").first ?? ""
            return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        }
    }

    static func capped(_ configuration: inout LiveBindServer.Configuration) {
        configuration.maxConnectionsPerAddress = 3
    }

    @Test func oneConnectionPastTheCapIsClosedAndOtherAddressesStillGetThrough() throws {
        try withRunningServer(configure: Self.capped) { (port: Int) throws in
            let held = try (0..<3).map { _ in try BoundSocket(port: port, from: "127.0.0.3") }
            for socket in held { #expect(try socket.healthStatus() == 200) }   // answered: counted by now
            #expect(try BoundSocket(port: port, from: "127.0.0.3").healthStatus() == nil)
            #expect(try BoundSocket(port: port, from: "127.0.0.4").healthStatus() == 200)
            withExtendedLifetime(held) {}
        }
    }

    @Test func aClosedConnectionGivesItsPlaceBack() throws {
        try withRunningServer(configure: Self.capped) { (port: Int) throws in
            var held = try (0..<3).map { _ in try BoundSocket(port: port, from: "127.0.0.3") }
            for socket in held { #expect(try socket.healthStatus() == 200) }
            #expect(try BoundSocket(port: port, from: "127.0.0.3").healthStatus() == nil)
            held.removeFirst()   // closes it
            var status: Int?
            for _ in 0..<50 where status == nil {
                status = try BoundSocket(port: port, from: "127.0.0.3").healthStatus()
                if status == nil { usleep(50_000) }
            }
            #expect(status == 200)
            withExtendedLifetime(held) {}
        }
    }

    @Test func byDefaultTheCapIsOnOnlyWhereAPeerAddressIsOneClient() {
        var configuration = LiveBindServer.Configuration()
        configuration.host = "0.0.0.0"
        #expect(configuration.effectiveMaxConnectionsPerAddress == 128)
        // Behind a proxy every client shares the proxy's address; on loopback every local process shares it.
        configuration.trustedProxies = ["10.0.0.9"]
        #expect(configuration.effectiveMaxConnectionsPerAddress == 0)
        configuration.trustedProxies = []
        configuration.host = "127.0.0.1"
        #expect(configuration.effectiveMaxConnectionsPerAddress == 0)
        configuration.maxConnectionsPerAddress = 5
        #expect(configuration.effectiveMaxConnectionsPerAddress == 5)
    }
}
