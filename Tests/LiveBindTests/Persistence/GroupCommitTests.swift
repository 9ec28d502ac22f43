import Foundation
import Logging
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// The data directory's group commit, seen over HTTP: a sync in progress holds the writes it covers and
/// their events, never a read, and the writes that arrive meanwhile share the next sync.
@Suite("Group commit", .serialized) struct GroupCommitTests {
    typealias Client = TestHTTPClient

    /// Holds the commit log's writer thread before each sync while closed.
    final class SyncGate: @unchecked Sendable {
        private let condition = NSCondition()
        private var open = true
        private var held = 0

        func pass() {
            condition.lock()
            held += 1
            condition.broadcast()
            while !open { condition.wait() }
            held -= 1
            condition.unlock()
        }

        func close() { condition.withLock { open = false } }

        func release() {
            condition.lock()
            open = true
            condition.broadcast()
            condition.unlock()
        }

        /// Waits until the writer thread is held (at most `seconds`).
        func waitUntilHeld(seconds: Double = 10) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            condition.lock()
            defer { condition.unlock() }
            while held == 0 { if !condition.wait(until: deadline) { return false } }
            return true
        }
    }

    static func withServer(_ gate: SyncGate, _ body: (LiveBindServer, Int) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            var configuration = LiveBindServer.Configuration()
            configuration.network.port = 0
            configuration.persistence.dataDirectory = directory
            configuration.beforeLogSync = { gate.pass() }
            var logger = Logger(label: "livebind.test")
            logger.logLevel = .warning
            let server = try LiveBindServer(configuration: configuration, logger: logger)
            try server.start()
            defer {
                gate.release()
                server.stop()
            }
            try body(server, server.port)
        }
    }

    /// Runs `count` writes on threads of their own; returns what each got, once all are answered.
    final class Writes: @unchecked Sendable {
        private let lock = NSLock()
        private var answers: [Int: TestHTTPResponse] = [:]
        private var failures = 0

        init(port: Int, count: Int, _ request: @escaping @Sendable (Int) -> (String, String)) {
            for number in 0..<count {
                Thread.detachNewThread { [self] in
                    let (target, body) = request(number)
                    let answer = try? Client.send(port: port, "PUT", target, body)
                    lock.withLock { if let answer { answers[number] = answer } else { failures += 1 } }
                }
            }
        }

        var answered: Int { lock.withLock { answers.count + failures } }
        var all: [Int: TestHTTPResponse] { lock.withLock { answers } }

        func waitForAll(_ count: Int, seconds: Double = 20) {
            let deadline = Date().addingTimeInterval(seconds)
            while answered < count, Date() < deadline { usleep(5_000) }
        }
    }

    @Test func aSyncInProgressHoldsItsWriteAndEventButNoRead() throws {
        let gate = SyncGate()
        try Self.withServer(gate) { (server, port) throws in
            #expect(try Client.send(port: port, "PUT", "/models/m", #"{"v":0}"#).status == 201)
            let stream = try TestEventStream(port: port, target: "/events?model=m", timeout: 1)
            _ = try stream.next(1)
            gate.close()
            let writes = Writes(port: port, count: 1) { _ in ("/models/m/v", "1") }
            #expect(gate.waitUntilHeld())
            // The sync is in progress: reads answer at once, with what is on disk.
            let read = try Client.request(port: port, "GET", "/models/m")
            #expect(read.text == #"{"v":0}"#)
            #expect(read.header("ETag") == "\"1\"")
            #expect(try Client.request(port: port, "GET", "/models").text == #"{"models":[{"name":"m","rev":1}]}"#)
            let late = try TestEventStream(port: port, target: "/events?model=m", timeout: 1)
            let snapshot = try #require(try late.next(1).first)
            #expect(snapshot.id == "1")
            #expect(try snapshot.object()["value"] as? [String: Int] == ["v": 0])
            // Neither the write's answer nor its event leave before the sync returns.
            #expect(throws: (any Error).self) { try stream.next() }
            #expect(writes.answered == 0)
            gate.release()
            writes.waitForAll(1)
            #expect(try writes.all[0]?.object()["id"] as? String == "2")
            #expect(try stream.next()?.id == "2")
            #expect(try late.next()?.id == "2")
            #expect(try Client.request(port: port, "GET", "/models/m").text == #"{"v":1}"#)
        }
    }

    @Test func writesThatArriveDuringASyncShareTheNextOne() throws {
        let gate = SyncGate()
        try Self.withServer(gate) { (server, port) throws in
            let members = (0..<16).map { "\"k\($0)\":0" }.joined(separator: ",")
            #expect(try Client.send(port: port, "PUT", "/models/m", "{\(members)}").status == 201)
            gate.close()
            let writes = Writes(port: port, count: 16) { number in ("/models/m/k\(number)", "1") }
            #expect(gate.waitUntilHeld())
            // All 16 are applied in memory while the first sync is held; none is answered.
            let deadline = Date().addingTimeInterval(20)
            while server.store.lastSequence < 17, Date() < deadline { usleep(5_000) }
            #expect(server.store.lastSequence == 17)
            #expect(writes.answered == 0)
            gate.release()
            writes.waitForAll(16)
            #expect(writes.all.values.filter { $0.status == 200 }.count == 16)
            // The put's sync, the held one, and one for all that waited behind it.
            let metrics = try Client.request(port: port, "GET", "/metrics").text
            func value(_ name: String) -> Int? {
                metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Int($0.split(separator: " ")[1]) }
            }
            #expect(value("livebind_log_commits_total") == 17)
            #expect((2...3).contains(value("livebind_log_syncs_total") ?? 0))
        }
    }
}
