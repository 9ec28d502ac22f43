import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// One bad request and the status it must get.
struct BadRequestCase: CustomTestStringConvertible, Sendable {
    var name: String
    var method: String
    var target: String
    var headers: [(String, String)]
    var body: [UInt8]?
    var status: Int
    var allow: String?

    init(
        _ name: String, _ method: String, _ target: String, type: String? = "application/json",
        _ body: String? = nil, status: Int, allow: String? = nil, headers: [(String, String)] = []
    ) {
        self.name = name
        self.method = method
        self.target = target
        self.headers = (type.map { [("Content-Type", $0)] } ?? []) + headers
        self.body = body.map { Array($0.utf8) }
        self.status = status
        self.allow = allow
    }

    var testDescription: String { "\(name): \(method) \(target) → \(status)" }
}

@Suite("Problem responses") struct ProblemResponseTests {
    static let cases: [BadRequestCase] = [
        .init("malformed JSON", "PUT", "/models/m/a", "{", status: 400),
        .init("trailing garbage", "PUT", "/models/m/a", "1 2", status: 400),
        .init("lone surrogate", "PUT", "/models/m/a", "\"\u{FFFD}\"".replacingOccurrences(of: "\u{FFFD}", with: "\\ud800"), status: 400),
        .init("bad pointer escape", "PUT", "/models/m/a~2", "1", status: 400),
        .init("invalid model name", "PUT", "/models/bad%20name", "{}", status: 400),
        .init("unknown model", "GET", "/models/nope", type: nil, status: 404),
        .init("unknown path", "GET", "/models/m/nope", type: nil, status: 404),
        .init("set under a missing parent", "PUT", "/models/m/x/y", "1", status: 404),
        .init("unknown route", "GET", "/nothing-here", type: nil, status: 404),
        .init("PUT on the model list", "PUT", "/models", "{}", status: 405, allow: "GET, HEAD, PATCH"),
        .init("POST on healthz", "POST", "/healthz", "{}", status: 405, allow: "GET, HEAD"),
        .init("no body length", "PUT", "/models/m/a", nil, status: 411),
        .init("form on PUT", "PUT", "/models/m/a", type: "application/x-www-form-urlencoded", "a=1", status: 415),
        .init("no media type", "PUT", "/models/m/a", type: nil, "1", status: 415),
        .init("plain JSON on PATCH", "PATCH", "/models/m", "{}", status: 415),
        .init("text on POST", "POST", "/models/m/list", type: "text/plain", "1", status: 415),
        .init("model root not an object", "PUT", "/models/m", "[1]", status: 422),
        .init("index out of range", "PUT", "/models/m/list/9", "1", status: 422),
        .init("index past Int.max, out of range too", "PUT", "/models/m/list/99999999999999999999", "1", status: 422),
        .init("index Int.max, out of range", "DELETE", "/models/m/list/9223372036854775807", nil, status: 422),
        .init("type mismatch", "PUT", "/models/m/a/b", "1", status: 422),
        .init("append to a number", "POST", "/models/m/a", "1", status: 422),
        .init("patch not an array", "PATCH", "/models/m", type: "application/json-patch+json", "{}", status: 400),
        .init("JSON Patch under a pointer", "PATCH", "/models/m/list", type: "application/json-patch+json", "[]", status: 400),
        .init("stale If-Match", "PUT", "/models/m/a", "2", status: 412, headers: [("If-Match", "\"7\"")]),
        .init("bad form escape", "POST", "/models/m", type: "application/x-www-form-urlencoded", "a=%zz", status: 400),
        .init("empty form key", "POST", "/models/m", type: "application/x-www-form-urlencoded", "=1", status: 400),
        .init("too deep", "PUT", "/models/m/a", String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000), status: 400)
    ]

    @Test(arguments: cases)
    func badRequestGetsItsProblemAndChangesNothing(_ bad: BadRequestCase) throws {
        let store = Store()
        try store.put("m", ["a": 1, "list": [1, 2]])
        let before = store.lastSequence
        try withRunningServer(store: store) { port in
            let response = try TestHTTPClient.request(port: port, bad.method, bad.target, headers: bad.headers, body: bad.body)
            #expect(response.isProblem(bad.status), "\(response.status) \(response.text)")
            if let allow = bad.allow { #expect(response.header("Allow") == allow) }
            #expect(try TestHTTPClient.request(port: port, "GET", "/healthz").status == 200)
        }
        #expect(store.lastSequence == before)
        #expect(try store.value(of: "m") == ["a": 1, "list": [1, 2]])
    }

    @Test func bodyOverTheLimitIs413FromContentLengthAndWhenChunked() throws {
        let store = Store()
        try store.put("m", [:])
        try withRunningServer(store: store, configure: { $0.limits.bodyLimit = 1000 }) { port in
            let big = Array("\"\(String(repeating: "x", count: 5000))\"".utf8)
            let declared = try TestHTTPClient.request(
                port: port, "PUT", "/models/m/a",
                headers: [("Content-Type", "application/json")], body: big)
            #expect(declared.isProblem(413))
            let chunked = try TestHTTPClient.request(
                port: port, "PUT", "/models/m/a",
                headers: [("Content-Type", "application/json"), ("Transfer-Encoding", "chunked")],
                body: TestHTTPClient.chunked(big, size: 300))
            #expect(chunked.isProblem(413))
            let small = try TestHTTPClient.request(
                port: port, "PUT", "/models/m/a",
                headers: [("Content-Type", "application/json"), ("Transfer-Encoding", "chunked")],
                body: TestHTTPClient.chunked(Array("[1,2,3]".utf8), size: 2))
            #expect(small.status == 200)
        }
        #expect(try store.value(of: "m") == ["a": [1, 2, 3]])
    }
}
