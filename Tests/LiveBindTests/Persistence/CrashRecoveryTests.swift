import Foundation
import Synchronization
import Testing

/// The real executable with `--data`, killed with SIGKILL in the middle of a stream of writes and
/// restarted on the same directory.
@Suite("Crash recovery", .serialized) struct CrashRecoveryTests {
    typealias Client = TestHTTPClient

    /// What the writers saw acknowledged: per client, the values whose append was answered 200.
    /// (An `NSLock`, which the thread sanitizer sees, unlike `Mutex`'s contended path.)
    final class Acknowledged: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [[Int]]
        private var highest = 0

        let clients: Int

        init(clients: Int) {
            self.clients = clients
            values = Array(repeating: [], count: clients)
        }

        func add(_ value: Int, client: Int, id: Int) {
            lock.withLock {
                values[client].append(value)
                highest = max(highest, id)
            }
        }

        var count: Int { lock.withLock { values.joined().count } }
        var perClient: [[Int]] { lock.withLock { values } }
        var highestID: Int { lock.withLock { highest } }
    }

    /// One thread per client writing `values` in order, each as the body of a request `target` names,
    /// until the first failure (the kill) or `stop()`; answered writes go to `acknowledged`.
    final class Writers: Sendable {
        private let stopping = Atomic<Bool>(false)
        private let running: Atomic<Int>

        init(
            port: Int, acknowledged: Acknowledged, values: Range<Int>,
            target: @escaping @Sendable (Int) -> (method: String, path: String)
        ) {
            let clients = acknowledged.clients
            running = Atomic(clients)
            for client in 0..<clients {
                Thread.detachNewThread { [self] in
                    defer { running.subtract(1, ordering: .releasing) }
                    let (method, path) = target(client)
                    for value in values {
                        guard !stopping.load(ordering: .acquiring),
                            let answer = try? Client.send(port: port, method, path, "\(value)", headers: []),
                            answer.status == 200, let object = try? answer.object(),
                            let id = (object["id"] as? String).flatMap(Int.init)
                        else { return }
                        acknowledged.add(value, client: client, id: id)
                    }
                }
            }
        }

        /// Stops the writers and waits for them.
        func stop() {
            stopping.store(true, ordering: .releasing)
            while running.load(ordering: .acquiring) > 0 { usleep(10_000) }
        }
    }

    @Test func everyAcknowledgedWriteSurvivesSIGKILLAndClientsResumeByEventID() throws {
        try withTemporaryDirectory { directory in
            let clients = 4
            var server = try ServerProcess(["--no-demo", "--data", directory])
            var port = try server.waitForPort()
            #expect(server.log.contains("data directory \(directory)"))
            let lists = (0..<clients).map { "\"c\($0)\":[]" }.joined(separator: ",")
            #expect(try Client.send(port: port, "PUT", "/models/log", "{\(lists)}").status == 201)
            let bindings = [
                #"{"id":"count0","source":"log.c0","target":"log.count0","transform":"count"}"#,
                #"{"id":"count1","source":"log.c1","target":"log.count1","transform":"count"}"#
            ]
            for binding in bindings { #expect(try Client.send(port: port, "POST", "/bindings", binding).status == 201) }
            #expect(try Client.send(port: port, "PATCH", "/bindings/count1", #"{"enabled":false}"#).status == 200)

            // A watcher reads events while the writers run; it stops at the kill.
            let stream = try TestEventStream(port: port, target: "/events?model=log", timeout: 5)
            var seen: [TestEvent] = []
            _ = try stream.next(1)  // the snapshot

            let acknowledged = Acknowledged(clients: clients)
            let writers = Writers(port: port, acknowledged: acknowledged, values: 0..<2000) { client in
                ("POST", "/models/log/c\(client)")
            }
            // The watcher reads the first ~150 writes' events and then goes away (a closed laptop); the
            // writers go on to a few hundred writes, and the server is killed in the middle of them.
            let deadline = Date().addingTimeInterval(60)
            while acknowledged.count < 150, Date() < deadline {
                if let event = try? stream.next() { seen.append(event) }
            }
            while acknowledged.count < 400, Date() < deadline { usleep(5_000) }
            try server.kill()
            writers.stop()
            let lastSeen = try #require(seen.last?.id.flatMap(Int.init))
            let acked = acknowledged.perClient
            let highestAcknowledged = acknowledged.highestID

            server = try ServerProcess(["--no-demo", "--data", directory])
            port = try server.waitForPort()
            defer { try? server.terminate() }
            let model = try Client.request(port: port, "GET", "/models/log")
            let restoredSequence = try #require(model.header("LiveBind-Event-ID").flatMap(Int.init))
            let document = try model.object()
            var recovered = 0
            for client in 0..<clients {
                let values = (document["c\(client)"] as? [Int]) ?? []
                recovered += values.count
                // Every acknowledged append is there, in order; at most the one write in flight at the kill more.
                #expect(Array(values.prefix(acked[client].count)) == acked[client], "client \(client)")
                #expect(values.count <= acked[client].count + 1, "client \(client)")
                #expect(values == Array(0..<values.count), "client \(client)")
            }
            #expect(document["count0"] as? Int == (document["c0"] as? [Int])?.count)
            #expect(restoredSequence >= highestAcknowledged)

            // Resume from the last event seen before the kill: exactly the missed events, in order.
            let resumed = try TestEventStream(
                port: port, target: "/events?model=log",
                headers: [("Last-Event-ID", "\(lastSeen)")], timeout: 5)
            let missed = try resumed.next(restoredSequence - lastSeen)
            #expect(missed.allSatisfy { $0.type != "resync" && $0.type != "snapshot" })
            #expect(missed.compactMap { $0.id.flatMap(Int.init) } == Array((lastSeen + 1)...restoredSequence))

            // Ids and revisions keep increasing; bindings made over HTTP and their enabled flags are back.
            let write = try Client.send(port: port, "POST", "/models/log/c0", "-1").object()
            #expect(Int(write["id"] as? String ?? "") == restoredSequence + 1)
            let next = try #require(try resumed.next())
            #expect(next.id == "\(restoredSequence + 1)")
            let listed = try Client.getObject(port: port, "/bindings")["bindings"] as? [[String: Any]] ?? []
            #expect(listed.map { $0["id"] as? String } == ["count0", "count1"])
            #expect(listed.map { $0["enabled"] as? Bool } == [true, false])
            let ackedCount = acked.joined().count
            print(
                "crash recovery: writes acknowledged \(ackedCount), writes recovered \(recovered), "
                    + "events seen before the kill up to id \(lastSeen), events replayed after restart \(missed.count), "
                    + "ids continue at \(restoredSequence + 1)")
            #expect(recovered >= ackedCount)
        }
    }

    /// A 1 MB model (10,000 rows), eight writers at once, checkpoints during the run: every answered
    /// write is on disk after SIGKILL, and no event a client saw is missing from it.
    @Test func aOneMegabyteModelUnderConcurrentWritersLosesNoAcknowledgedWrite() throws {
        try withTemporaryDirectory { directory in
            let clients = 8
            let arguments = ["--no-demo", "--data", directory, "--checkpoint-bytes", "20000"]
            var server = try ServerProcess(arguments)
            var port = try server.waitForPort()
            let row = #"{"id":"r%d","v":0,"name":"row %d with some text to weigh it down","tags":["a","b","c"],"score":0.5}"#
            let rows = (0..<10_000).map { String(format: row, $0, $0) }.joined(separator: ",")
            let body = #"{"rows":["# + rows + "]}"
            #expect(body.utf8.count > 1_000_000)
            #expect(try Client.send(port: port, "PUT", "/models/big", body).status == 201)

            let stream = try TestEventStream(port: port, target: "/events?model=big", timeout: 5)
            _ = try stream.next(1)  // the snapshot
            let acknowledged = Acknowledged(clients: clients)
            let writers = Writers(port: port, acknowledged: acknowledged, values: 1..<5000) { client in
                ("PUT", "/models/big/rows/\(client * 1000)/v")
            }
            // The watcher's events: (id, row, value) of each `replace`/`set` it saw before the kill.
            var seen: [(id: Int, row: Int, value: Int)] = []
            let deadline = Date().addingTimeInterval(60)
            while acknowledged.count < 600, Date() < deadline {
                guard let event = try? stream.next(), let id = event.id.flatMap(Int.init),
                    let object = try? event.object(), let path = object["path"] as? String,
                    let value = object["value"] as? Int
                else { continue }
                let parts = path.split(separator: "/")
                if parts.count == 3, let row = Int(parts[1]) { seen.append((id, row, value)) }
            }
            try server.kill()
            writers.stop()
            #expect(acknowledged.count >= 600)
            #expect(!seen.isEmpty)

            server = try ServerProcess(arguments)
            port = try server.waitForPort()
            defer { try? server.terminate() }
            let model = try Client.request(port: port, "GET", "/models/big")
            let restoredSequence = try #require(model.header("LiveBind-Event-ID").flatMap(Int.init))
            let restoredRows = try #require(try model.object()["rows"] as? [[String: Any]])
            #expect(restoredRows.count == 10_000)
            for (client, values) in acknowledged.perClient.enumerated() {
                let restored = restoredRows[client * 1000]["v"] as? Int ?? -1
                // The last acknowledged value, or the one write in flight at the kill.
                #expect(restored == (values.last ?? 0) || restored == (values.last ?? 0) + 1, "client \(client)")
            }
            #expect(restoredSequence >= acknowledged.highestID)
            // Every event a client saw was durable: its id is restored, and its row holds that value or a later one.
            for event in seen {
                #expect(event.id <= restoredSequence)
                #expect((restoredRows[event.row]["v"] as? Int ?? -1) >= event.value)
            }
            print(
                "crash recovery, 1 MB model: writes acknowledged \(acknowledged.count), events seen \(seen.count), "
                    + "ids continue at \(restoredSequence + 1)")
        }
    }

    @Test func withoutDataTheServerSaysStateIsInMemoryAndARestartGivesResync() throws {
        var server = try ServerProcess(["--no-demo"])
        var port = try server.waitForPort()
        #expect(server.log.contains("state is in memory"))
        let written = try Client.send(port: port, "PUT", "/models/m", #"{"v":1}"#).object()
        let id = try #require(written["id"] as? String)
        try server.kill()
        server = try ServerProcess(["--no-demo"])
        port = try server.waitForPort()
        defer { try? server.terminate() }
        let stream = try TestEventStream(port: port, headers: [("Last-Event-ID", id)], timeout: 5)
        let first = try #require(try stream.next())
        #expect(first.type == "resync")
        #expect(try first.object()["reason"] as? String == "restart")
    }

    @Test func anUnusableDataDirectoryIsAClearStartError() throws {
        try withTemporaryDirectory { directory in
            let file = directory + "/plain-file"
            try Data("x".utf8).write(to: URL(fileURLWithPath: file))
            let corrupt = directory + "/corrupt"
            try FileManager.default.createDirectory(atPath: corrupt, withIntermediateDirectories: false)
            try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: corrupt + "/livebind.sqlite"))
            let cases: [(String, String)] = [
                (file, "exists but is not a directory"),
                (directory + "/missing/deeper", "cannot be created"),
                (corrupt, "is not a SQLite database")
            ]
            for (path, message) in cases {
                let server = try ServerProcess(["--no-demo", "--data", path])
                let status = try server.waitForExit()
                #expect(status != 0, "\(path)")
                #expect(server.log.contains(message), "\(server.log)")
                #expect(!server.log.contains("listening on"))
            }
            // A second server on a directory in use refuses to start instead of sharing the file.
            let first = try ServerProcess(["--no-demo", "--data", directory + "/shared"])
            _ = try first.waitForPort()
            defer { try? first.terminate() }
            let second = try ServerProcess(["--no-demo", "--data", directory + "/shared"])
            #expect(try second.waitForExit() != 0)
            #expect(second.log.contains("in use by another process"), "\(second.log)")
        }
    }
}
