import Foundation
import Logging
import Synchronization
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Access control: private reads and logs") struct PrivateReadTests {
    private func seeded() throws -> Store {
        let store = Store()
        try store.put("lab-1", ["t": 1])
        try store.put("other", ["t": 1])
        return store
    }

    private static var policy: AccessPolicy {
        var policy = TestTokens.policy
        policy.privateReads = true
        return policy
    }

    @Test func readsNeedAReadToken() throws {
        try withPublicDirectory { directory in
            try withRunningServer(
                store: try seeded(),
                configure: {
                    $0.access.policy = Self.policy; $0.network.publicDirectory = directory
                }
            ) { port in
                for target in ["/models", "/models/lab-1", "/models/lab-1/t", "/bindings", "/metrics", "/events"] {
                    let response = try TestHTTPClient.request(port: port, "GET", target)
                    #expect(response.isProblem(401), "\(target): \(response.status)")
                    #expect(response.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
                    let wrong = try TestHTTPClient.request(port: port, "GET", target, headers: TestTokens.bearer("nope"))
                    #expect(wrong.isProblem(401))
                }
                #expect(try TestHTTPClient.request(port: port, "GET", "/healthz").status == 200)
                #expect(try TestHTTPClient.request(port: port, "GET", "/").status == 200, "static files stay open")
                let reader = TestTokens.bearer(TestTokens.reader)
                #expect(try TestHTTPClient.request(port: port, "GET", "/models/other", headers: reader).text == #"{"t":1}"#)
                #expect(try TestHTTPClient.request(port: port, "GET", "/metrics", headers: reader).status == 200)
                let query = try TestHTTPClient.request(port: port, "GET", "/models/other?access_token=\(TestTokens.reader)")
                #expect(query.isProblem(401), "?access_token= is only for /events")
            }
        }
    }

    @Test func aWriteOnlyTokenCannotRead() throws {
        var policy = Self.policy
        policy.tokens.append(.init("writer-only-123456", scopes: [.write]))
        try withRunningServer(store: try seeded(), configure: { $0.access.policy = policy }) { port in
            let response = try TestHTTPClient.request(port: port, "GET", "/models/other", headers: TestTokens.bearer("writer-only-123456"))
            #expect(response.isProblem(403))
        }
    }

    /// Issue 26: a write-only token made a binding from a model it cannot read, and read that model's
    /// value in the binding's `lastError` (`expected a Boolean, found {"pin":"4711"}`).
    @Test func aWriteOnlyTokenCannotReadThroughABinding() throws {
        var policy = Self.policy
        policy.tokens.append(.init("lab-writer-123456", scopes: [.write], models: ["lab-"]))
        let store = try seeded()
        try store.put("lab-secret", ["pin": "4711"])
        try withRunningServer(store: store, configure: { $0.access.policy = policy }) { port in
            let writer = TestTokens.bearer("lab-writer-123456")
            let made = try TestHTTPClient.send(
                port: port, "POST", "/bindings",
                #"{"id":"leak","source":"lab-secret","target":"lab-x.y","transform":"not"}"#, headers: writer)
            #expect(made.isProblem(403) && !made.text.contains("4711"), "\(made.status) \(made.text)")
            #expect(made.text.contains("read"))
            // A token that may read makes it; the error names the type, never the value.
            let admin = TestTokens.bearer(TestTokens.admin)
            let allowed = try TestHTTPClient.send(
                port: port, "POST", "/bindings",
                #"{"id":"ok","source":"lab-secret","target":"lab-x.y","transform":"not"}"#, headers: admin)
            #expect(allowed.status == 201 && !allowed.text.contains("4711"), "\(allowed.text)")
            #expect(allowed.text.contains("expected a Boolean, found object"))
            for method in ["PATCH", "DELETE"] {
                let body = method == "PATCH" ? #"{"enabled":false}"# : ""
                let answer = try TestHTTPClient.send(port: port, method, "/bindings/ok", body, headers: writer)
                #expect(answer.isProblem(403) && !answer.text.contains("4711"), "\(method): \(answer.status) \(answer.text)")
            }
        }
    }

    /// A write-only token writes blind: a JSON Patch `test` was an oracle for the model's values (200 when
    /// `/pin` held 4711, 422 otherwise), and refusals named the array's length, a value's type and the
    /// model's size; an append's `index` was the array's length. Now `test` is 403 and the answers say
    /// only whether the write applied and the kind of refusal. A token that may read gets every detail.
    @Test func aWriteOnlyTokenWritesBlind() throws {
        var policy = Self.policy
        policy.tokens.append(.init("lab-writer-123456", scopes: [.write], models: ["lab-"]))
        var limits = StoreLimits()
        limits.maxModelBytes = 300
        let store = Store(limits: limits)
        try store.put("lab-secret", ["pin": 4711, "name": "probe", "arr": [1, 2, 3, 4, 5, 6, 7]])
        try withRunningServer(store: store, configure: { $0.access.policy = policy }) { port in
            let writer = TestTokens.bearer("lab-writer-123456"), admin = TestTokens.bearer(TestTokens.admin)
            for guess in [4710, 4711] {
                let test = try TestHTTPClient.send(
                    port: port, "PATCH", "/models/lab-secret", #"[{"op":"test","path":"/pin","value":\#(guess)}]"#,
                    type: "application/json-patch+json", headers: writer)
                #expect(test.isProblem(403) && test.text.contains("test reads the model"), "\(guess): \(test.status) \(test.text)")
            }
            // Each refusal the model's content decides is one answer (409) for a blind writer, so a JSON
            // Patch that probes, then fails for sure, cannot tell the probe's outcome by the status.
            let refusals: [(String, String, String, Int, [String])] = [
                ("PUT", "/models/lab-secret/arr/99", "1", 422, ["7", "elements"]),
                ("PUT", "/models/lab-secret/name/x", "1", 422, ["string", "object"]),
                ("POST", "/models/lab-secret/pin", "1", 422, ["number"]),
                ("PUT", "/models/lab-secret/big", "\"" + String(repeating: "x", count: 400) + "\"", 413, ["300", "bytes"]),
                ("PUT", "/models/lab-secret/nothing/here", "1", 404, ["nothing"])
            ]
            for (method, target, body, status, hidden) in refusals {
                let blind = try TestHTTPClient.send(port: port, method, target, body, headers: writer)
                #expect(blind.isProblem(409), "\(method) \(target): \(blind.status) \(blind.text)")
                let detail = try blind.object()["detail"] as? String ?? ""
                #expect(detail.contains("says no more") && !hidden.contains { detail.contains($0) }, "\(method) \(target): \(detail)")
                let seeing = try TestHTTPClient.send(port: port, method, target, body, headers: admin)
                #expect(seeing.status == status && !seeing.text.contains("says no more"), "\(seeing.text)")
            }
            let fail = #"{"op":"move","from":"/zzz","path":"/zzz/a"}"#
            for probe in [#"{"op":"remove","path":"/arr/2"}"#, #"{"op":"remove","path":"/arr/9"}"#] {
                let chained = try TestHTTPClient.send(
                    port: port, "PATCH", "/models/lab-secret", "[\(probe),\(fail)]",
                    type: "application/json-patch+json", headers: writer)
                #expect(chained.isProblem(409), "\(probe): \(chained.status) \(chained.text)")
            }
            let appended = try TestHTTPClient.send(port: port, "POST", "/models/lab-secret/arr", "8", headers: writer)
            #expect(appended.status == 200 && !appended.text.contains("index"), "\(appended.text)")
            let shown = try TestHTTPClient.send(port: port, "POST", "/models/lab-secret/arr", "9", headers: admin)
            #expect(shown.text.contains(#""index":8"#), "\(shown.text)")
            #expect(try store.value(of: "lab-secret", at: Path(dotted: "pin")) == 4711)
        }
    }

    /// The metrics count every model (`livebind_models`, events, streams): a `lab-` token read there
    /// that two models exist where `GET /models` shows it one.
    @Test func onlyATokenForEveryModelReadsTheMetrics() throws {
        try withRunningServer(store: try seeded(), configure: { $0.access.policy = Self.policy }) { port in
            let refused = try TestHTTPClient.request(port: port, "GET", "/metrics", headers: TestTokens.bearer(TestTokens.lab))
            #expect(refused.isProblem(403) && !refused.text.contains("livebind_models"), "\(refused.text)")
            let admin = try TestHTTPClient.request(port: port, "GET", "/metrics", headers: TestTokens.bearer(TestTokens.admin))
            #expect(admin.status == 200 && admin.text.contains("livebind_models 2"), "\(admin.text.prefix(200))")
        }
    }

    @Test func aPrefixTokenSeesOnlyItsModels() throws {
        try withRunningServer(store: try seeded(), configure: { $0.access.policy = Self.policy }) { port in
            let lab = TestTokens.bearer(TestTokens.lab)
            #expect(
                try TestHTTPClient.request(port: port, "GET", "/models", headers: lab).text == #"{"models":[{"name":"lab-1","rev":1}]}"#)
            #expect(try TestHTTPClient.request(port: port, "GET", "/models/other", headers: lab).isProblem(403))
            #expect(try TestHTTPClient.request(port: port, "GET", "/models/lab-1", headers: lab).status == 200)
            let admin = TestTokens.bearer(TestTokens.admin)
            _ = try TestHTTPClient.send(
                port: port, "POST", "/bindings", #"{"id":"o","source":"other.t","target":"other.u"}"#, headers: admin)
            _ = try TestHTTPClient.send(
                port: port, "POST", "/bindings", #"{"id":"l","source":"lab-1.t","target":"lab-1.u"}"#, headers: admin)
            let listed = try TestHTTPClient.request(port: port, "GET", "/bindings", headers: lab).object()["bindings"] as? [[String: Any]]
            #expect(listed?.map { $0["id"] as? String } == ["l"])
            // Outside its reach a binding does not exist for the token: 404, naming none of its models.
            let hidden = try TestHTTPClient.request(port: port, "GET", "/bindings/o", headers: lab)
            #expect(hidden.isProblem(404) && !hidden.text.contains("other"), "\(hidden.text)")
            #expect(try TestHTTPClient.request(port: port, "GET", "/bindings/l", headers: lab).status == 200)
        }
    }

    @Test func theStreamTakesAQueryTokenAndCarriesOnlyCoveredModels() throws {
        let store = try seeded()
        try withRunningServer(store: store, configure: { $0.access.policy = Self.policy }) { port in
            let stream = try TestEventStream(port: port, target: "/events?access_token=\(TestTokens.lab)")
            #expect(stream.status == 200)
            let snapshot = try #require(try stream.next())
            #expect(snapshot.type == "snapshot")
            #expect(try snapshot.object()["model"] as? String == "lab-1")
            try store.set(2, at: Path(dotted: "t"), in: "other")
            try store.put("other-2", [:])
            try store.put("lab-2", ["n": 1])
            try store.set(3, at: Path(dotted: "t"), in: "lab-1")
            let next = try stream.next(2)
            #expect(next.map(\.type) == ["snapshot", "set"])
            #expect(try next.map { try $0.object()["model"] as? String } == ["lab-2", "lab-1"])

            let named = try TestEventStream(port: port, target: "/events?model=other&access_token=\(TestTokens.lab)")
            #expect(named.status == 403)
            let header = try TestEventStream(port: port, target: "/events?model=other", headers: TestTokens.bearer(TestTokens.reader))
            #expect(header.status == 200, "the header works on /events too")
            let none = try TestEventStream(port: port, target: "/events")
            #expect(none.status == 401)
            #expect(String(decoding: none.errorBody, as: UTF8.self).contains("access_token"))
        }
    }

    @Test func aResyncKeepsTheFilter() throws {
        let store = try seeded()
        try withRunningServer(store: store, configure: { $0.access.policy = Self.policy }) { port in
            let stream = try TestEventStream(port: port, target: "/events?lastEventId=999&access_token=\(TestTokens.lab)")
            let events = try stream.next(2)
            #expect(events.map(\.type) == ["resync", "snapshot"])
            #expect(try events[1].object()["model"] as? String == "lab-1")
            try store.set(5, at: Path(dotted: "t"), in: "lab-1")
            #expect(try stream.next()?.type == "set")
        }
    }

    @Test func privateReadsWithoutTokensDoNotStart() throws {
        var configuration = LiveBindServer.Configuration()
        configuration.network.port = 0
        configuration.access.policy.privateReads = true
        let server = LiveBindServer(store: Store(), configuration: configuration)
        #expect(throws: ServerError.invalidAccessPolicy("private reads need at least one token (--token, --tokens or --jwt-key)")) {
            try server.start()
        }
    }

    @Test func tokensNeverReachTheLog() throws {
        let records = LogRecords()
        var logger = Logger(label: "livebind.test") { _ in RecordingLogHandler(records: records) }
        logger.logLevel = .trace
        var configuration = LiveBindServer.Configuration()
        configuration.network.port = 0
        configuration.access.policy = Self.policy
        let store = try seeded()
        let server = LiveBindServer(store: store, configuration: configuration, logger: logger)
        try server.start()
        let port = server.port
        let secrets = [TestTokens.admin, TestTokens.lab, TestTokens.reader, "guessed-token-31337"]
        for secret in secrets {
            _ = try TestHTTPClient.send(port: port, "PUT", "/models/lab-1/t", "7", headers: TestTokens.bearer(secret))
            _ = try TestHTTPClient.request(port: port, "GET", "/models/other", headers: TestTokens.bearer(secret))
            let stream = try TestEventStream(port: port, target: "/events?access_token=\(secret)")
            _ = stream.status
        }
        _ = try TestHTTPClient.request(port: port, "GARBAGE", "/models/x?access_token=\(TestTokens.admin)")
        server.stop()
        let lines = records.all
        #expect(lines.count >= 2, "start and stop are logged")
        for secret in secrets {
            #expect(!lines.contains { $0.contains(secret) }, "a log line holds a token")
        }
        #expect(lines.contains { $0.contains("3 tokens") })
    }
}

/// Log lines (message and metadata) collected by `RecordingLogHandler`.
final class LogRecords: Sendable {
    private let lines = OrderedMutex<[String]>([])
    func add(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// A swift-log handler that keeps every line, with its metadata, for inspection.
struct RecordingLogHandler: LogHandler {
    let records: LogRecords
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        records.add("\(event.level) \(event.message) \(all) \(event.error.map { "\($0)" } ?? "")")
    }
}
