import Foundation
import Logging
import Testing
@testable import LiveBindHTTP

/// The first step of a graceful stop: the daemon stops taking connections while the ones it has
/// go on being served, with two worker threads (the default pool, where libmicrohttpd's own
/// `MHD_quiesce_daemon` could abort the process).
@Suite("Quiescing the daemon") struct QuiesceTests {
    static func daemon(
        respond: @escaping @Sendable (HTTPRequest) -> HTTPResponse = { _ in .text("ok") }
    ) -> MicroHTTPDDaemon {
        let options = MicroHTTPDDaemon.Options(
            host: "127.0.0.1", port: 0, connectionLimit: 64, connectionsPerAddress: 0,
            connectionMemoryLimit: 32 * 1024, connectionTimeoutSeconds: 30, requestTimeout: .seconds(10),
            threadPoolSize: 2, sendBufferSize: 0, bodyLimit: 1024, serverHeader: "test")
        let handlers = MicroHTTPDDaemon.Handlers(
            respond: respond,
            reject: { _, _ in HTTPResponse(status: 400) },
            redactLog: { $0 })
        return MicroHTTPDDaemon(options: options, handlers: handlers, counters: ServerCounters(), logger: Logger(label: "test"))
    }

    /// Sends one keep-alive `GET /` and returns the status line, or nil when the server closed the connection.
    static func statusLine(_ socket: TestSocket) throws -> String? {
        try socket.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        guard let line = try? socket.readLine() else { return nil }
        var header = line
        while !header.isEmpty { header = try socket.readLine() }
        _ = try socket.read(count: 2)  // "ok"
        return line
    }

    @Test func aNewConnectionIsClosedAndAnOpenOneIsStillAnswered() throws {
        let daemon = Self.daemon()
        try daemon.start()
        defer { daemon.stop() }
        let port = Int(daemon.port)
        let open = try TestSocket(port: port, timeout: 5)
        #expect(try Self.statusLine(open) == "HTTP/1.1 200 OK")
        daemon.quiesce()
        // The kernel still completes the handshake; the daemon then closes the connection (it is not
        // left waiting in the listen backlog, where a client would hang until its own timeout).
        let late = try TestSocket(port: port, timeout: 5)
        #expect(throws: Never.self) { try late.waitForClose() }
        #expect(try Self.statusLine(open) == "HTTP/1.1 200 OK")
    }

    /// Quiescing while both workers are busy with other connections, many times over: the process
    /// survives and every round stops.
    @Test func quiescingWhileWorkersAreBusyNeverAborts() async throws {
        for _ in 0..<20 {
            let daemon = Self.daemon()
            try daemon.start()
            let port = Int(daemon.port)
            let clients = (0..<4).map { _ in
                Task.detached {
                    guard let socket = try? TestSocket(port: port, timeout: 2) else { return }
                    for _ in 0..<50 { guard (try? Self.statusLine(socket)) != nil else { return } }
                }
            }
            try await Task.sleep(for: .milliseconds(5))
            daemon.quiesce()
            for client in clients { await client.value }
            daemon.stop()
        }
    }

    /// A write answered once durable (a deferred answer) that arrives on an open connection while the
    /// daemon stops: its connection is not suspended (stopping with a suspended connection aborts the
    /// process); the worker waits for the answer and the stop completes.
    @Test func aDeferredAnswerDuringAStopIsWaitedForNotSuspended() throws {
        let daemon = Self.daemon { request in
            guard request.path == "/write" else { return .text("ok") }
            let answer = DeferredAnswer()
            Thread.detachNewThread {
                usleep(300_000)
                answer.complete(.text("ok"))
            }
            return .deferred(answer)
        }
        try daemon.start()
        let open = try TestSocket(port: Int(daemon.port), timeout: 5)
        #expect(try Self.statusLine(open) == "HTTP/1.1 200 OK")
        daemon.quiesce()
        try open.send("POST /write HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
        usleep(50_000)  // the worker has the request and waits for its answer
        let started = ContinuousClock.now
        daemon.stop()
        let took = ContinuousClock.now - started
        #expect(took > .milliseconds(100) && took < .seconds(5))  // it waited for the answer
        #expect(daemon.deferredAnswers.load(ordering: .relaxed) == 0)
    }
}
