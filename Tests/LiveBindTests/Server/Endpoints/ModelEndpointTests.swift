import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Model endpoints") struct ModelEndpointTests {
    typealias Client = TestHTTPClient

    @Test func putCreatesThenReplacesAndGetReturnsTheDocumentWithETagAndEventID() throws {
        try withRunningServer { port in
            let created = try Client.send(port: port, "PUT", "/models/sensor", #"{"temperature":20}"#)
            #expect(created.status == 201)
            #expect(created.header("Location") == "/models/sensor")
            #expect(created.text == #"{"id":"1","rev":1}"#)
            let replaced = try Client.send(port: port, "PUT", "/models/sensor", #"{"temperature":21,"unit":"C"}"#)
            #expect(replaced.status == 200)
            #expect(try replaced.object()["rev"] as? Int == 2)
            let document = try Client.request(port: port, "GET", "/models/sensor")
            #expect(document.status == 200)
            #expect(document.header("ETag") == "\"2\"")
            #expect(document.header("LiveBind-Event-ID") == "2")
            #expect(try document.object()["unit"] as? String == "C")
            let head = try Client.request(port: port, "HEAD", "/models/sensor")
            #expect(head.status == 200 && head.body.isEmpty && head.header("ETag") == "\"2\"")
        }
    }

    @Test func getListsModelsAndReadsPointers() throws {
        let store = Store()
        try store.put("b", ["list": [10, 20, ["deep": "yes"]], "a~b": 1, "c/d": 2])
        try store.put("a", [:])
        try withRunningServer(store: store) { port in
            let list = try Client.getObject(port: port, "/models")
            let models = try #require(list["models"] as? [[String: Any]])
            #expect(models.map { $0["name"] as? String } == ["a", "b"])
            #expect(models.map { $0["rev"] as? Int } == [1, 1])
            #expect(try Client.request(port: port, "GET", "/models/b/list/1").text == "20")
            #expect(try Client.request(port: port, "GET", "/models/b/list/2/deep").text == #""yes""#)
            #expect(try Client.request(port: port, "GET", "/models/b/a~0b").text == "1")
            #expect(try Client.request(port: port, "GET", "/models/b/c~1d").text == "2")
        }
    }

    @Test func putAtAPointerSetsAndDeleteRemovesOrDrops() throws {
        let store = Store()
        try store.put("m", ["a": 1, "list": [1, 2, 3]])
        try withRunningServer(store: store) { port in
            #expect(try Client.send(port: port, "PUT", "/models/m/a", "5").text == #"{"id":"2","rev":2}"#)
            #expect(try Client.send(port: port, "PUT", "/models/m/b", #"{"x":true}"#).status == 200)
            #expect(try Client.request(port: port, "DELETE", "/models/m/list/1").status == 200)
            #expect(try Client.request(port: port, "DELETE", "/models/m/b").status == 200)
            #expect(try store.value(of: "m") == ["a": 5, "list": [1, 3]])
            let dropped = try Client.request(port: port, "DELETE", "/models/m")
            #expect(dropped.status == 200)
            #expect(try Client.request(port: port, "GET", "/models/m").isProblem(404))
        }
    }

    @Test func patchAppliesMergePatchAndJSONPatch() throws {
        let store = Store()
        try store.put("m", ["a": 1, "b": ["c": 2, "d": 3], "list": [1]])
        try withRunningServer(store: store) { port in
            let merge = try Client.send(
                port: port, "PATCH", "/models/m", #"{"a":null,"b":{"c":20}}"#,
                type: "application/merge-patch+json")
            #expect(merge.status == 200)
            let atPointer = try Client.send(
                port: port, "PATCH", "/models/m/b", #"{"e":5}"#,
                type: "application/merge-patch+json")
            #expect(atPointer.status == 200)
            let patch = try Client.send(
                port: port, "PATCH", "/models/m",
                #"[{"op":"add","path":"/list/-","value":2},{"op":"replace","path":"/b/d","value":30}]"#,
                type: "application/json-patch+json")
            #expect(patch.status == 200)
            #expect(try store.value(of: "m") == ["b": ["c": 20, "d": 30, "e": 5], "list": [1, 2]])
        }
    }

    @Test func failedJSONPatchTestIs422AndChangesNothing() throws {
        let store = Store()
        try store.put("m", ["a": 1])
        try withRunningServer(store: store) { port in
            let response = try Client.send(
                port: port, "PATCH", "/models/m",
                #"[{"op":"replace","path":"/a","value":2},{"op":"test","path":"/a","value":99}]"#,
                type: "application/json-patch+json")
            #expect(response.isProblem(422))
            #expect(try store.value(of: "m") == ["a": 1])
            #expect(try store.snapshot("m").revision == 1)
        }
    }

    @Test func postAppendsToArraysAndMergesIntoObjects() throws {
        let store = Store()
        try store.put("m", ["orders": [["id": "a"]], "info": ["x": 1], "n": 3])
        try withRunningServer(store: store) { port in
            let appended = try Client.send(port: port, "POST", "/models/m/orders", #"{"id":"b"}"#)
            #expect(appended.text == #"{"id":"2","rev":2,"index":1}"#)
            let merged = try Client.send(port: port, "POST", "/models/m/info", #"{"y":2}"#)
            #expect(try merged.object()["index"] == nil)
            #expect(try store.value(of: "m", at: Path(pointer: "/info")) == ["x": 1, "y": 2])
            #expect(try Client.send(port: port, "POST", "/models/m/n", "1").isProblem(422))
        }
    }

    @Test func postFormSetsDottedKeyPathsReadingJSONWhenItParses() throws {
        let store = Store()
        try store.put("sensor", ["temperature": 20, "list": [0, 0]])
        try withRunningServer(store: store) { port in
            let response = try Client.send(
                port: port, "POST", "/models/sensor",
                "temperature=21.5&label=very+hot%21&meta.unit=C&flag=true&list.1=7",
                type: "application/x-www-form-urlencoded")
            #expect(response.status == 200)
            #expect(try response.object()["rev"] as? Int == 2)
            let value = try store.value(of: "sensor")
            #expect(value == ["temperature": 21.5, "list": [0, 7], "label": "very hot!", "meta": ["unit": "C"], "flag": true])
        }
    }

    @Test func ifMatchGuardsWrites() throws {
        let store = Store()
        try store.put("m", ["a": 1])
        try withRunningServer(store: store) { port in
            let ok = try Client.send(port: port, "PUT", "/models/m/a", "2", headers: [("If-Match", "\"1\"")])
            #expect(ok.status == 200)
            let stale = try Client.send(port: port, "PUT", "/models/m/a", "3", headers: [("If-Match", "\"1\"")])
            #expect(stale.isProblem(412))
            let malformed = try Client.send(port: port, "PUT", "/models/m/a", "3", headers: [("If-Match", "one")])
            #expect(malformed.isProblem(400))
            // If-Match compares strongly (RFC 9110 13.1.1): a weak tag of the current revision matches nothing.
            let weak = try Client.send(port: port, "PUT", "/models/m/a", "3", headers: [("If-Match", "W/\"2\"")])
            #expect(weak.isProblem(412) && weak.text.contains("weak"))
            // If-Match: * holds for a model that exists, and creates nothing (RFC 9110 13.1.1).
            #expect(try Client.send(port: port, "PUT", "/models/m/b", "4", headers: [("If-Match", "*")]).status == 200)
            let missing = try Client.send(port: port, "PUT", "/models/new", "{}", headers: [("If-Match", "*")])
            #expect(missing.isProblem(412))
            #expect(throws: StoreError.self) { try store.value(of: "new") }
            #expect(try store.value(of: "m") == ["a": 2, "b": 4])
        }
    }

    @Test func ifNoneMatchStarCreatesAModelOnlyWhenItDoesNotExist() throws {
        // RFC 9110 section 13.1.2: a create-only PUT was taken as a plain PUT and replaced the model.
        let store = Store()
        try store.put("m", ["owner": "alice"])
        try withRunningServer(store: store) { port in
            let star = [("If-None-Match", "*")]
            let refused = try Client.send(port: port, "PUT", "/models/m", #"{"owner":"bob"}"#, headers: star)
            #expect(refused.isProblem(412))
            #expect(try store.value(of: "m") == ["owner": "alice"])
            let created = try Client.send(port: port, "PUT", "/models/fresh", #"{"owner":"bob"}"#, headers: star)
            #expect(created.status == 201)
            #expect(try store.value(of: "fresh") == ["owner": "bob"])
            #expect(
                try Client.send(
                    port: port, "PATCH", "/models/m", #"{"owner":"eve"}"#,
                    type: "application/merge-patch+json", headers: star
                ).isProblem(412))
            // Not evaluated there, so refused rather than ignored.
            #expect(try Client.send(port: port, "PUT", "/models/m/owner", #""eve""#, headers: star).isProblem(400))
            #expect(
                try Client.send(
                    port: port, "PUT", "/models/m", #"{"owner":"eve"}"#,
                    headers: [("If-None-Match", "\"1\"")]
                ).isProblem(400))
            #expect(try store.value(of: "m") == ["owner": "alice"])
        }
    }

    @Test func aJSONPatchAnswerHasNoIndexEvenWhenAnOperationInserts() throws {
        let store = Store()
        try store.put("m", ["list": [1]])
        try withRunningServer(store: store) { port in
            let patched = try Client.send(
                port: port, "PATCH", "/models/m", #"[{"op":"add","path":"/list/-","value":2}]"#,
                type: "application/json-patch+json")
            #expect(patched.status == 200 && patched.text == #"{"id":"2","rev":2}"#)
        }
    }

    @Test func patchProducesTheSameEventsOnTwoStreams() throws {
        let store = Store()
        try store.put("m", ["a": 1, "b": 2])
        try withRunningServer(store: store) { port in
            let one = try TestEventStream(port: port)
            let two = try TestEventStream(port: port, target: "/events?model=m")
            _ = try one.next(1)
            _ = try two.next(1)
            let response = try Client.send(
                port: port, "PATCH", "/models/m", #"{"a":10,"b":null}"#,
                type: "application/merge-patch+json")
            let id = try response.object()["id"] as? String
            let first = try #require(try one.next())
            let second = try #require(try two.next())
            #expect(first.type == "batch" && second.type == "batch")
            #expect(first.id == id && second.id == id)
            #expect(first.data == second.data)
            let changes = try #require(try first.object()["changes"] as? [[String: Any]])
            #expect(changes.map { $0["kind"] as? String } == ["set", "remove"])
            #expect(changes.map { $0["path"] as? String } == ["/a", "/b"])
        }
    }

    @Test func metricsReportStreamsWritesAndErrors() throws {
        try withRunningServer { port in
            _ = try Client.send(port: port, "PUT", "/models/m", "{}")
            _ = try Client.request(port: port, "GET", "/models/nope")
            let stream = try TestEventStream(port: port)
            try waitForMetric(port: port, "livebind_events_published_total", atLeast: 1)
            let metrics = try Client.request(port: port, "GET", "/metrics")
            #expect(metrics.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
            #expect(metrics.text.contains("# TYPE livebind_open_streams gauge\nlivebind_open_streams 1\n"))
            #expect(metrics.text.contains("livebind_writes_total 1\n"))
            #expect(metrics.text.contains("livebind_errors_total 1\n"))
            #expect(metrics.text.contains("livebind_events_published_total 1\n"))
            _ = stream
        }
    }
}
