import Foundation
import Logging
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// The server made with `Configuration.dataDirectory`, in process.
@Suite("Data directory server") struct DataDirectoryServerTests {
    typealias Client = TestHTTPClient

    static func withServer<Result>(_ directory: String, _ body: (LiveBindServer, Int) throws -> Result) throws -> Result {
        var configuration = LiveBindServer.Configuration()
        configuration.network.port = 0
        configuration.persistence.dataDirectory = directory
        var logger = Logger(label: "livebind.test")
        logger.logLevel = .warning
        // `stop()` closes the directory: the next server can open it as soon as it returns.
        let server = try LiveBindServer(configuration: configuration, logger: logger)
        try server.start()
        defer { server.stop() }
        return try body(server, server.port)
    }

    /// An operator's `top -H`, `perf` or `/proc/PID/task/*/comm` names the server's own threads.
    @Test func theCommitLogAndEventFeedThreadsCarryTheirNamesForTheSystem() throws {
        func threadNames() -> Set<String> {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            return Set(
                tasks.compactMap { task in
                    (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                        .trimmingCharacters(in: .whitespacesAndNewlines)
                })
        }
        try withTemporaryDirectory { directory in
            try Self.withServer(directory) { (_, _) throws in
                var names = threadNames()
                // Each thread names itself as it starts.
                for _ in 0..<200 where !names.isSuperset(of: ["lb-commit-log", "lb-event-feed"]) {
                    usleep(10_000)
                    names = threadNames()
                }
                #expect(names.isSuperset(of: ["lb-commit-log", "lb-event-feed"]), "thread names: \(names.sorted())")
            }
        }
    }

    @Test func aWriteTheDiskRefusesIs503AndChangesNothingUntilARestart() throws {
        try withTemporaryDirectory { directory in
            try Self.withServer(directory) { (server, port) throws in
                #expect(try Client.send(port: port, "PUT", "/models/m", #"{"v":0}"#).status == 201)
                let stream = try TestEventStream(port: port, target: "/events?model=m", timeout: 2)
                _ = try stream.next(1)
                try server.database!.withConnection { connection in
                    let pages = try connection.database.prepare("PRAGMA page_count")
                    _ = try pages.step()
                    try connection.database.execute("PRAGMA max_page_count = \(pages.int64(0))")
                }
                let big = "\"" + String(repeating: "x", count: 200_000) + "\""
                let refused = try Client.send(port: port, "PUT", "/models/m/v", big)
                #expect(refused.isProblem(503))
                #expect(try refused.object()["type"] as? String == "urn:livebind:problem:storage-unavailable")
                let model = try Client.request(port: port, "GET", "/models/m")
                #expect(model.text == #"{"v":0}"#)
                #expect(model.header("ETag") == "\"1\"")
                // The log takes no more writes: the disk's state is unknown until the server restarts.
                #expect(try Client.send(port: port, "PUT", "/models/m/v", "2").isProblem(503))
                #expect(try Client.request(port: port, "GET", "/models/m").text == #"{"v":0}"#)
                // The refused writes were never streamed.
                #expect(throws: (any Error).self) { try stream.next() }
            }
            try Self.withServer(directory) { (_, port) throws in
                #expect(try Client.request(port: port, "GET", "/models/m").text == #"{"v":0}"#)
                #expect(try Client.send(port: port, "PUT", "/models/m/v", "2").object()["id"] as? String == "2")
            }
        }
    }

    @Test func theServerStartsFromWhatTheLastOneLeft() throws {
        try withTemporaryDirectory { directory in
            try Self.withServer(directory) { (_, port) throws in
                #expect(try Client.send(port: port, "PUT", "/models/m", #"{"v":0}"#).status == 201)
                #expect(try Client.send(port: port, "POST", "/bindings", #"{"id":"copy","source":"m.v","target":"m.w"}"#).status == 201)
                #expect(try Client.send(port: port, "PUT", "/models/m/v", "5").status == 200)
            }
            try Self.withServer(directory) { (server, port) throws in
                #expect(try Client.request(port: port, "GET", "/models/m").text == #"{"v":5,"w":5}"#)
                #expect(server.bindings.binding(id: "copy") != nil)
                #expect(try Client.send(port: port, "DELETE", "/bindings/copy", "").status == 200)
                let stream = try TestEventStream(port: port, target: "/events", headers: [("Last-Event-ID", "1")], timeout: 5)
                #expect(try stream.next(3).map(\.id) == ["2", "3", "4"])
            }
            try Self.withServer(directory) { (server, _) throws in
                #expect(server.bindings.all.isEmpty)
            }
        }
    }

    @Test func aBindingDisabledOverHTTPComesBackDisabledWithoutCatchingUp() throws {
        try withTemporaryDirectory { directory in
            try Self.withServer(directory) { (_, port) throws in
                #expect(try Client.send(port: port, "PUT", "/models/m", #"{"v":1}"#).status == 201)
                #expect(try Client.send(port: port, "POST", "/bindings", #"{"id":"frozen","source":"m.v","target":"m.f"}"#).status == 201)
                #expect(try Client.send(port: port, "PATCH", "/bindings/frozen", #"{"enabled":false}"#).status == 200)
                #expect(try Client.send(port: port, "PUT", "/models/m/v", "2").status == 200)
            }
            for _ in 0..<2 {
                try Self.withServer(directory) { (server, port) throws in
                    #expect(try Client.request(port: port, "GET", "/models/m").text == #"{"v":2,"f":1}"#)
                    #expect(server.bindings.binding(id: "frozen")?.isEnabled == false)
                }
            }
        }
    }

    /// The example in docs/HTTP.md ("With a data directory"), on a temporary directory and any port.
    @Test func theDocumentedEmbeddingKeepsAWriteAcrossServers() throws {
        try withTemporaryDirectory { directory in
            var configuration = LiveBindServer.Configuration()
            configuration.persistence.dataDirectory = directory
            configuration.network.port = 0
            let first = try LiveBindServer(configuration: configuration)
            let written = try first.store.put("sensor", ["temperature": 20.5]).result
            try first.store.waitUntilDurable(through: written.sequence)
            try first.start()
            first.stop()
            // The first server is still here, but stopping closed its directory: its store refuses
            // writes, it does not start again, and the next server opens the directory at once.
            #expect(throws: StoreError.storageFailed(CommitWriter.closedReason)) {
                try first.store.put("sensor", ["temperature": 21])
            }
            #expect(throws: ServerError.self) { try first.start() }
            let server = try LiveBindServer(configuration: configuration)
            #expect(try server.store.value(of: "sensor") == ["temperature": 20.5])
            #expect(server.store.lastSequence == 1)
        }
    }
}
