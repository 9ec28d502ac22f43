import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import LiveBindClient
@testable import LiveBindEngine

/// The Swift client's HTTP (libcurl on one thread) against a `livebind-server` process on a loopback
/// port: a body read as it comes holds at most its buffer while its reader is away and arrives whole
/// when it reads; a stream let go of, or whose task is cancelled, is closed on the server; a refused
/// connection is an error, not a wait; a stream is silent when the server sends no line, not when its
/// reader is slow.
@Suite("The Swift client's transport", .serialized, .timeLimit(.minutes(2)))
struct TransportTests {
    static func openStreams(_ port: Int) throws -> Int {
        let text = String(decoding: try TestHTTPClient.request(port: port, "GET", "/metrics").body, as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix("livebind_open_streams ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
    }

    /// The client's transport to the server on `port`, with no token.
    static func transport(_ port: Int) -> HTTPTransport {
        HTTPTransport(base: URL(string: "http://127.0.0.1:\(port)")!, token: nil, caFile: nil)
    }

    static func eventually(_ what: String, _ condition: () throws -> Bool) async throws {
        for _ in 0..<500 {
            if try condition() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("timed out waiting for \(what)")
    }

    /// An 8 MiB model read through a stream whose reader waits: the transfer pauses with at most its
    /// 1 MiB buffer (and one chunk) unread, then goes on as it is read, and the body is the model whole.
    @Test func aReaderThatWaitsPausesTheTransfer() async throws {
        let process = try ServerProcess(["--no-demo", "--body-limit", "16777216"])
        defer { try? process.terminate() }
        let port = try process.waitForPort(timeout: 30)
        let rows = (0..<8192).map { "\"" + String(repeating: String($0 % 10), count: 1000) + "\"" }
        let text = #"{"rows":["# + rows.joined(separator: ",") + "]}"
        let document = try JSON(parsing: Data(text.utf8))
        let put = try TestHTTPClient.send(port: port, "PUT", "/models/big", text)
        #expect(put.status == 200 || put.status == 201)

        let transport = Self.transport(port)
        let stream = try await transport.open(transport.request("GET", "/models/big"))
        #expect(stream.status == 200)
        try await Task.sleep(for: .milliseconds(500))
        let unread = stream.unreadBytes
        #expect(unread >= 1 << 20, "the transfer went on reading while its reader waited")
        #expect(unread <= (1 << 20) + (64 << 10), "\(unread) bytes unread: more than the buffer")
        let body = try await stream.collect(upTo: 64 << 20)
        #expect(try JSON(parsing: body) == document)
    }

    /// A reading task cancelled before the body is whole throws: a cut-off body never reads as an
    /// answer (the 8 MiB body cannot be whole: the transfer pauses at 1 MiB unread).
    @Test func aCancelledReadThrowsRatherThanEndShort() async throws {
        let process = try ServerProcess(["--no-demo", "--body-limit", "16777216"])
        defer { try? process.terminate() }
        let port = try process.waitForPort(timeout: 30)
        let text = #"{"rows":["# + (0..<8192).map { _ in "\"" + String(repeating: "x", count: 1000) + "\"" }.joined(separator: ",") + "]}"
        _ = try TestHTTPClient.send(port: port, "PUT", "/models/big", text)
        let transport = Self.transport(port)
        let stream = try await transport.open(transport.request("GET", "/models/big"))
        let reader = Task { try await stream.collect(upTo: 64 << 20) }
        reader.cancel()
        await #expect(throws: CancellationError.self) { _ = try await reader.value }
    }

    /// A POST with no body says `Content-Length: 0` (the server answers 411 to one that says nothing).
    @Test func aPostWithoutBodySaysItsLength() async throws {
        let process = try ServerProcess(["--no-demo"])
        defer { try? process.terminate() }
        let port = try process.waitForPort(timeout: 30)
        let transport = Self.transport(port)
        let answer = try await transport.send(transport.request("POST", "/session"))
        #expect(answer.status != 411, "\(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
    }

    /// A stream whose reader lets go of it, and one whose task is cancelled, end on the server.
    @Test func aStreamLetGoOfOrCancelledIsClosed() async throws {
        let process = try ServerProcess(["--no-demo", "--heartbeat", "1"])
        defer { try? process.terminate() }
        let port = try process.waitForPort(timeout: 30)
        _ = try TestHTTPClient.send(port: port, "PUT", "/models/m", #"{"a":1}"#)
        let transport = Self.transport(port)

        var stream: HTTPStream? = try await transport.open(transport.request("GET", "/events?model=m"))
        #expect(stream?.status == 200)
        try await Self.eventually("the stream to open") { try Self.openStreams(port) == 1 }
        stream = nil
        try await Self.eventually("the stream let go of to close") { try Self.openStreams(port) == 0 }

        let reader = Task {
            let stream = try await transport.open(transport.request("GET", "/events?model=m"))
            var bytes = 0
            for try await chunk in stream.body { bytes += chunk.count }
            return bytes
        }
        try await Self.eventually("the second stream to open") { try Self.openStreams(port) == 1 }
        reader.cancel()
        _ = try? await reader.value
        try await Self.eventually("the cancelled stream to close") { try Self.openStreams(port) == 0 }
    }

    /// Nothing listening on the port (a server's, after it stopped): the request fails with libcurl's reason.
    @Test func aRefusedConnectionIsAnError() async throws {
        let process = try ServerProcess(["--no-demo"])
        let port = try process.waitForPort(timeout: 30)
        try process.terminate()
        let transport = Self.transport(port)
        await #expect(throws: CurlError.self) { try await transport.send(transport.request("GET", "/healthz")) }
    }

    /// A server that takes the connection and never answers: a stream opened with a silence limit
    /// fails after about that long instead of waiting for its head for ever.
    @Test func aSilentServerEndsTheStream() async throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        try #require(bound && listen(listener, 4) == 0)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let transport = Self.transport(port)
        let started = ContinuousClock.now
        await #expect(throws: CurlError.self) {
            _ = try await transport.open(transport.request("GET", "/events"), silence: .milliseconds(500))
        }
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    /// A stream whose reader does not read for three times its silence limit, while the server sends a
    /// heartbeat every second: the heartbeats arrive, so it stays open, and then it reads the change
    /// made meanwhile. Silence is the server's, measured as bytes arrive, not the reader's.
    @Test func aSlowReaderIsNotASilentServer() async throws {
        let process = try ServerProcess(["--no-demo", "--heartbeat", "1"])
        defer { try? process.terminate() }
        let port = try process.waitForPort(timeout: 30)
        _ = try TestHTTPClient.send(port: port, "PUT", "/models/m", #"{"a":1}"#)
        let transport = Self.transport(port)
        let stream = try await transport.open(transport.request("GET", "/events?model=m"), silence: .seconds(2))
        try await Task.sleep(for: .seconds(6))
        _ = try TestHTTPClient.send(port: port, "PUT", "/models/m/a", "2")
        var text = ""
        for try await chunk in stream.body {
            text += String(decoding: chunk, as: UTF8.self)
            if text.contains("event: set") { break }
        }
        #expect(text.contains("event: set"))
    }
}
