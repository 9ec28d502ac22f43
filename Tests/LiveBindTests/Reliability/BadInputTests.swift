import Foundation
import LiveBind
@testable import LiveBindEngine
import Testing

/// The catalogue of malformed and hostile requests: each gets its expected status, changes no model and
/// no sequence number, and the server keeps answering afterwards.
@Suite("Bad input catalogue") struct BadInputTests {
    /// One hostile request and the answer it must get. `status` 0 means "the server may just close".
    struct Case: CustomStringConvertible {
        var name: String
        var raw: [UInt8]
        var statuses: Set<Int>
        /// Whether libmicrohttpd answers it before LiveBind sees a request (its answers are not problem+json).
        var answeredByTransport = false
        var description: String { name }

        /// A request built from parts; `Content-Length` is added for a body unless `chunked`.
        init(
            _ name: String, _ method: String, _ target: String, _ headers: [(String, String)] = [],
            body: [UInt8]? = nil, chunked: Bool = false, expect statuses: Set<Int>
        ) {
            var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            for (field, value) in headers { head += "\(field): \(value)\r\n" }
            var payload: [UInt8] = []
            if let body {
                if chunked {
                    head += "Transfer-Encoding: chunked\r\n"
                    var offset = 0
                    while offset < body.count {
                        let piece = body[offset..<min(offset + 65_536, body.count)]
                        payload += Array(String(piece.count, radix: 16).utf8) + [13, 10] + piece + [13, 10]
                        offset += piece.count
                    }
                    payload += Array("0\r\n\r\n".utf8)
                } else {
                    head += "Content-Length: \(body.count)\r\n"
                    payload = body
                }
            }
            self.init(name, raw: Array((head + "\r\n").utf8) + payload, expect: statuses)
        }

        init(
            _ name: String, _ method: String, _ target: String, json text: String, contentType: String = "application/json",
            expect statuses: Set<Int>
        ) {
            self.init(name, method, target, [("Content-Type", contentType)], body: Array(text.utf8), expect: statuses)
        }

        init(_ name: String, raw: [UInt8], byTransport: Bool = false, expect statuses: Set<Int>) {
            self.name = name
            self.raw = raw
            self.statuses = statuses
            self.answeredByTransport = byTransport
        }
    }

    static let json = "application/json"
    static let merge = "application/merge-patch+json"
    static let jsonPatch = "application/json-patch+json"
    static let form = "application/x-www-form-urlencoded"

    static func deep(_ depth: Int, open: String, close: String, leaf: String = "1") -> String {
        String(repeating: open, count: depth) + leaf + String(repeating: close, count: depth)
    }

    static let cases: [Case] = {
        var cases: [Case] = []
        let temperature = "/models/sensor/temperature"
        // Malformed and truncated JSON.
        for (name, text) in [
            ("truncated object", "{"), ("truncated array", "[1,2"), ("missing value", "{\"a\":}"),
            ("truncated literal", "tru"), ("unterminated string", "\"abc"), ("leading zero", "01"),
            ("bare decimal point", "1."), ("NaN", "NaN"), ("Infinity", "Infinity"), ("huge exponent", "1e400"),
            ("huge negative exponent number", "-1e99999"), ("trailing comma", "{\"a\":1,}"),
            ("two documents", "[1] [2]"), ("single quotes", "'x'"), ("lone surrogate escape", "\"\\ud800\""),
            ("bad escape", "\"\\x41\""), ("raw control character", "\"a\u{01}b\""), ("empty body", ""),
            ("nesting 10,000 deep arrays", deep(10_000, open: "[", close: "]")),
            ("nesting 10,000 deep objects", deep(10_000, open: "{\"a\":", close: "}"))
        ] {
            cases.append(Case("JSON: \(name)", "PUT", temperature, json: text, expect: [400]))
        }
        cases.append(
            Case(
                "JSON: invalid UTF-8", "PUT", temperature, [("Content-Type", json)],
                body: [0x22, 0xFF, 0xFE, 0x22], expect: [400]))
        cases.append(
            Case(
                "JSON: overlong UTF-8", "PUT", temperature, [("Content-Type", json)],
                body: [0x22, 0xC0, 0xAF, 0x22], expect: [400]))
        cases.append(Case("JSON patch body malformed", "PATCH", "/models/sensor", json: "[{\"op\":", contentType: jsonPatch, expect: [400]))
        cases.append(Case("merge patch body malformed", "PATCH", "/models/sensor", json: "{\"a\" 1}", contentType: merge, expect: [400]))
        // Bodies over the limit (1 MiB by default), with and without Content-Length, and missing bodies.
        let big = Array("[\"".utf8) + [UInt8](repeating: 0x61, count: 2 << 20) + Array("\"]".utf8)
        cases.append(Case("body over the limit", "PUT", "/models/big", [("Content-Type", json)], body: big, expect: [413]))
        cases.append(
            Case(
                "chunked body over the limit", "PUT", "/models/big", [("Content-Type", json)],
                body: big, chunked: true, expect: [413]))
        cases.append(
            Case(
                "Content-Length of a terabyte",
                raw: Array(
                    "PUT /models/big HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000000000\r\n\r\n{}".utf8),
                expect: [413]))
        cases.append(Case("PUT without a body", "PUT", temperature, [("Content-Type", json)], expect: [411]))
        cases.append(Case("PATCH without a body", "PATCH", "/models/sensor", [("Content-Type", merge)], expect: [411]))
        // Wrong or missing media types.
        cases.append(Case("PUT as text/plain", "PUT", temperature, json: "21", contentType: "text/plain", expect: [415]))
        cases.append(Case("PUT as XML", "PUT", "/models/sensor", json: "<a/>", contentType: "application/xml", expect: [415]))
        cases.append(Case("PATCH as plain JSON", "PATCH", "/models/sensor", json: "{\"a\":1}", contentType: json, expect: [415]))
        cases.append(Case("PATCH without a media type", "PATCH", "/models/sensor", [], body: Array("{}".utf8), expect: [415]))
        cases.append(
            Case("POST multipart", "POST", "/models/sensor", json: "--x--", contentType: "multipart/form-data; boundary=x", expect: [415]))
        cases.append(Case("POST /bindings as text", "POST", "/bindings", json: "{}", contentType: "text/plain", expect: [415]))
        // Bad pointers and key paths.
        cases.append(Case("pointer with ~2", "GET", "/models/sensor/a~2b", expect: [400]))
        cases.append(Case("pointer ending in ~", "PUT", "/models/sensor/a~", json: "1", expect: [400]))
        // A token that is not an array index (RFC 6901: no leading zeros, no sign; `-` is past the end)
        // names no element: 404, like any other missing location.
        cases.append(Case("index with a leading zero", "PUT", "/models/sensor/readings/01", json: "1", expect: [404]))
        cases.append(Case("negative index", "PUT", "/models/sensor/readings/-1", json: "1", expect: [404]))
        cases.append(Case("- where no element exists", "DELETE", "/models/sensor/readings/-", expect: [404]))
        cases.append(Case("- in a GET", "GET", "/models/sensor/readings/-", expect: [400, 404]))
        cases.append(Case("empty segment that does not exist", "GET", "/models/sensor//x", expect: [404]))
        cases.append(Case("index out of range (read)", "GET", "/models/sensor/readings/7", expect: [404]))
        cases.append(Case("index out of range (write)", "PUT", "/models/sensor/readings/7", json: "1", expect: [422]))
        cases.append(Case("index out of range (delete)", "DELETE", "/models/sensor/readings/99", expect: [404, 422]))
        cases.append(Case("member below a number", "PUT", "/models/sensor/temperature/x", json: "1", expect: [422]))
        cases.append(Case("missing intermediate object", "PUT", "/models/sensor/missing/deep", json: "1", expect: [404]))
        cases.append(Case("append to a number", "POST", temperature, json: "1", expect: [422]))
        cases.append(
            Case("form with an empty key path segment", "POST", "/models/sensor", json: "a..b=1", contentType: form, expect: [400]))
        cases.append(
            Case("form with bad percent-encoding", "POST", "/models/sensor", json: "temperature=%zz", contentType: form, expect: [400]))
        cases.append(Case("form below a number", "POST", "/models/sensor", json: "temperature.x=1", contentType: form, expect: [422]))
        // Type mismatches and failed patches (nothing applies, even when an earlier op was fine).
        cases.append(Case("model replaced by an array", "PUT", "/models/sensor", json: "[1]", expect: [422]))
        cases.append(Case("model replaced by a number", "PUT", "/models/sensor", json: "5", expect: [422]))
        cases.append(
            Case(
                "JSON patch test fails mid-patch", "PATCH", "/models/sensor",
                json: "[{\"op\":\"replace\",\"path\":\"/temperature\",\"value\":1},{\"op\":\"test\",\"path\":\"/name\",\"value\":\"x\"}]",
                contentType: jsonPatch, expect: [422]))
        cases.append(
            Case(
                "JSON patch unknown op", "PATCH", "/models/sensor", json: "[{\"op\":\"explode\",\"path\":\"/a\"}]",
                contentType: jsonPatch, expect: [400, 422]))
        cases.append(
            Case(
                "JSON patch not an array", "PATCH", "/models/sensor", json: "{\"op\":\"remove\"}",
                contentType: jsonPatch, expect: [400, 422]))
        cases.append(
            Case(
                "JSON patch op without path", "PATCH", "/models/sensor", json: "[{\"op\":\"remove\"}]",
                contentType: jsonPatch, expect: [400, 422]))
        cases.append(
            Case(
                "JSON patch move into its own child", "PATCH", "/models/sensor",
                json: "[{\"op\":\"move\",\"from\":\"/nested\",\"path\":\"/nested/deep/y\"}]", contentType: jsonPatch, expect: [400]))
        cases.append(
            Case(
                "JSON patch remove of a missing member", "PATCH", "/models/sensor",
                json: "[{\"op\":\"add\",\"path\":\"/fresh\",\"value\":1},{\"op\":\"remove\",\"path\":\"/nope\"}]",
                contentType: jsonPatch, expect: [422]))
        cases.append(
            Case(
                "JSON patch bad pointer", "PATCH", "/models/sensor",
                json: "[{\"op\":\"add\",\"path\":\"temperature\",\"value\":1}]", contentType: jsonPatch, expect: [400, 422]))
        cases.append(
            Case("merge patch of the model with an array", "PATCH", "/models/sensor", json: "[1]", contentType: merge, expect: [422]))
        // Unknown models, bad names, unknown routes and methods.
        cases.append(Case("unknown model", "GET", "/models/nope", expect: [404]))
        cases.append(Case("write to an unknown model", "PUT", "/models/nope/x", json: "1", expect: [404]))
        cases.append(Case("patch an unknown model", "PATCH", "/models/nope", json: "{}", contentType: merge, expect: [404]))
        cases.append(Case("drop an unknown model", "DELETE", "/models/nope", expect: [404]))
        cases.append(Case("model name with a space", "PUT", "/models/bad%20name", json: "{}", expect: [400]))
        cases.append(
            Case("model name of 200 characters", "PUT", "/models/" + String(repeating: "m", count: 200), json: "{}", expect: [400]))
        cases.append(Case("unknown route", "GET", "/nope", expect: [404]))
        cases.append(Case("TRACE a model", "TRACE", "/models/sensor", expect: [405]))
        cases.append(Case("DELETE /healthz", "DELETE", "/healthz", expect: [405]))
        cases.append(Case("POST /events", "POST", "/events", json: "{}", expect: [405]))
        cases.append(Case("PUT /bindings", "PUT", "/bindings", json: "{}", expect: [405]))
        cases.append(Case("POST /models", "POST", "/models", json: "{}", expect: [405]))
        cases.append(Case("unknown binding", "PATCH", "/bindings/nope", json: "{\"enabled\":false}", expect: [404]))
        cases.append(Case("delete an unknown binding", "DELETE", "/bindings/nope", expect: [404]))
        cases.append(Case("binding without a target", "POST", "/bindings", json: "{\"source\":\"sensor.temperature\"}", expect: [400, 422]))
        cases.append(
            Case(
                "binding with an unknown transform", "POST", "/bindings",
                json: "{\"source\":\"sensor.temperature\",\"target\":\"other.n\",\"transform\":\"nope\"}", expect: [400, 422]))
        // Stale or malformed preconditions.
        cases.append(
            Case(
                "If-Match a stale revision", "PUT", temperature, [("Content-Type", json), ("If-Match", "\"999\"")],
                body: Array("1".utf8), expect: [412]))
        cases.append(
            Case(
                "If-Match garbage", "PUT", temperature, [("Content-Type", json), ("If-Match", "banana")],
                body: Array("1".utf8), expect: [400, 412]))
        // Header floods and request-line garbage: an error status, or the connection closed.
        let flood = (0..<400).map { ("X-Flood-\($0)", String(repeating: "f", count: 100)) }
        cases.append(Case("400 header fields", "GET", "/models", flood, expect: [0, 400, 413, 431]))
        cases.append(
            Case(
                "one 64 KiB header field", "GET", "/models", [("X-Big", String(repeating: "b", count: 65_536))],
                expect: [0, 400, 413, 431]))
        cases.append(Case("request-line garbage", raw: Array("GARBAGE\r\n\r\n".utf8), byTransport: true, expect: [0, 400]))
        cases.append(Case("binary request line", raw: [0x00, 0xFF, 0x13, 0x37, 13, 10, 13, 10], byTransport: true, expect: [0, 400]))
        cases.append(Case("HTTP/9.9", raw: Array("GET /models HTTP/9.9\r\nHost: x\r\n\r\n".utf8), expect: [0, 400, 505]))
        cases.append(Case("HTTP/1.1 without Host", raw: Array("GET /models HTTP/1.1\r\n\r\n".utf8), expect: [0, 400]))
        cases.append(
            Case(
                "header line without a colon", raw: Array("GET /models HTTP/1.1\r\nHost: x\r\nnocolon\r\n\r\n".utf8),
                byTransport: true, expect: [0, 400]))
        // Framing in doubt (RFC 9112): refused, whatever the body says (RequestFramingTests checks the close).
        let framingHead = "PUT \(temperature) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        for (name, fields, body, status) in [
            ("conflicting Content-Length", "Content-Length: 3\r\nContent-Length: 40\r\n", "123", 400),
            ("repeated Content-Length", "Content-Length: 2\r\nContent-Length: 2\r\n", "12", 400),
            ("Content-Length with Transfer-Encoding", "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n", "2\r\n12\r\n0\r\n\r\n", 400),
            ("chunked applied twice", "Transfer-Encoding: chunked, chunked\r\n", "2\r\n12\r\n0\r\n\r\n", 400),
            ("unsupported transfer coding", "Transfer-Encoding: gzip\r\n", "12", 501)
        ] {
            cases.append(Case("framing: \(name)", raw: Array((framingHead + fields + "\r\n" + body).utf8), expect: [status]))
        }
        // Malformed chunk sizes: libmicrohttpd refuses them itself.
        for (name, chunks) in [
            ("non-hex chunk size", "zz\r\n12\r\n0\r\n\r\n"),
            ("chunk size past 64 bits", "1ffffffffffffffffff\r\n12\r\n0\r\n\r\n"),
            ("negative chunk size", "-2\r\n12\r\n0\r\n\r\n")
        ] {
            cases.append(
                Case(
                    "framing: \(name)", raw: Array((framingHead + "Transfer-Encoding: chunked\r\n\r\n" + chunks).utf8),
                    byTransport: true, expect: [0, 400, 413]))
        }
        // Path traversal on static files.
        for target in [
            "/../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/%2E%2E%2Fsecret.txt", "/..%2fsecret.txt",
            "/examples/../../secret.txt", "/escape.txt", "/%00index.html", "/index.html%00.js"
        ] {
            cases.append(Case("static traversal \(target)", "GET", target, expect: [400, 403, 404]))
        }
        return cases
    }()

    /// Requests that are fine apart from a query string: each endpoint ignores what it does not use.
    static let queryCases: [(String, String, Int)] = [
        ("GET", "/healthz?x=1", 200), ("GET", "/models?x=1&y", 200), ("GET", "/models/sensor?z=%zz", 200),
        ("GET", "/models/sensor/temperature?x", 200), ("GET", "/bindings?x=1", 200), ("GET", "/metrics?x=1", 200),
        ("GET", "/?x=1", 200), ("GET", "/index.html?v=2", 200), ("GET", "/models/nope?x=1", 404)
    ]

    /// The status and media type of the answer; status 0 when the server closed without one.
    static func send(_ raw: [UInt8], port: Int) -> (status: Int, contentType: String?) {
        do {
            let socket = try TestSocket(port: port, timeout: 10)
            try? socket.send(raw)  // the server may close before it has read everything (413)
            let response = try TestHTTPClient.readResponse(from: socket)
            return (response.status, response.header("Content-Type"))
        } catch {
            return (0, nil)
        }
    }

    @Test func everyHostileRequestGetsItsStatusAndChangesNothing() throws {
        let store = Store()
        try store.put(
            "sensor",
            [
                "temperature": 20.5, "name": "probe", "readings": [1, 2, 3],
                "rows": [["id": "a", "v": 1]], "nested": ["deep": ["x": 1]]
            ])
        try store.put("other", ["n": 1])
        try withPublicDirectory { publicDirectory in
            try withRunningServer(store: store, configure: { $0.network.publicDirectory = publicDirectory }) { port in
                let before = store.snapshot(models: nil)
                for testCase in Self.cases {
                    let (status, contentType) = Self.send(testCase.raw, port: port)
                    #expect(testCase.statuses.contains(status), "\(testCase.name): got \(status), expected \(testCase.statuses.sorted())")
                    // libmicrohttpd itself answers what never parses as a request (431, 505, garbage).
                    if status >= 400 && ![431, 505].contains(status) && !testCase.answeredByTransport {
                        #expect(contentType == "application/problem+json", "\(testCase.name): answered as \(contentType ?? "nothing")")
                    }
                    let after = store.snapshot(models: nil)
                    #expect(after.sequence == before.sequence, "\(testCase.name) committed something")
                    #expect(after.models.map(\.value) == before.models.map(\.value), "\(testCase.name) changed a model")
                    #expect(after.models.map(\.name) == before.models.map(\.name), "\(testCase.name) created or dropped a model")
                }
                for (method, target, expected) in Self.queryCases {
                    let response = try TestHTTPClient.request(port: port, method, target)
                    #expect(response.status == expected, "\(method) \(target): got \(response.status)")
                }
                #expect(try TestHTTPClient.request(port: port, "GET", "/healthz").status == 200)
                #expect(store.snapshot(models: nil).sequence == before.sequence)
                print(
                    "bad input catalogue: \(Self.cases.count) hostile requests and \(Self.queryCases.count) query-string requests, server still up"
                )
            }
        }
    }

    @Test func catalogueIsLargeEnough() {
        #expect(Self.cases.count >= 60)
    }
}
