import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine
#if canImport(Glibc)
import Glibc
#endif

/// `--max-connections-per-address` (libmicrohttpd's per-IP connection limit): one peer address
/// cannot take every connection. The clients connect from loopback aliases (127.0.0.3, 127.0.0.4),
/// so that the server sees two addresses.
@Suite("Connections per address") struct ConnectionsPerAddressTests {
    static func capped(_ configuration: inout LiveBindServer.Configuration) {
        configuration.network.maxConnectionsPerAddress = 3
    }

    @Test func oneConnectionPastTheCapIsClosedAndOtherAddressesStillGetThrough() throws {
        try withRunningServer(configure: Self.capped) { (port: Int) throws in
            let held = try (0..<3).map { _ in try TestBoundSocket(port: port, from: "127.0.0.3") }
            for socket in held { #expect(try socket.status(of: "/healthz") == 200) }  // answered: counted by now
            #expect(try TestBoundSocket(port: port, from: "127.0.0.3").status(of: "/healthz") == nil)
            #expect(try TestBoundSocket(port: port, from: "127.0.0.4").status(of: "/healthz") == 200)
            withExtendedLifetime(held) {}
        }
    }

    @Test func aClosedConnectionGivesItsPlaceBack() throws {
        try withRunningServer(configure: Self.capped) { (port: Int) throws in
            var held = try (0..<3).map { _ in try TestBoundSocket(port: port, from: "127.0.0.3") }
            for socket in held { #expect(try socket.status(of: "/healthz") == 200) }
            #expect(try TestBoundSocket(port: port, from: "127.0.0.3").status(of: "/healthz") == nil)
            held.removeFirst()  // closes it
            var status: Int?
            for _ in 0..<50 where status == nil {
                status = try TestBoundSocket(port: port, from: "127.0.0.3").status(of: "/healthz")
                if status == nil { usleep(50_000) }
            }
            #expect(status == 200)
            withExtendedLifetime(held) {}
        }
    }

    @Test func byDefaultTheCapIsOnOnlyWhereAPeerAddressIsOneClient() {
        var configuration = LiveBindServer.Configuration()
        configuration.network.host = "0.0.0.0"
        #expect(configuration.effectiveMaxConnectionsPerAddress == 128)
        // Behind a proxy every client shares the proxy's address; on loopback every local process shares it.
        configuration.network.trustedProxies = ["10.0.0.9"]
        #expect(configuration.effectiveMaxConnectionsPerAddress == 0)
        configuration.network.trustedProxies = []
        configuration.network.host = "127.0.0.1"
        #expect(configuration.effectiveMaxConnectionsPerAddress == 0)
        configuration.network.maxConnectionsPerAddress = 5
        #expect(configuration.effectiveMaxConnectionsPerAddress == 5)
    }
}
