import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Bindings over HTTP") struct BindingsResourceTests {
    typealias Client = TestHTTPClient
    static let label =
        #"{"id":"label","source":"sensor.temperature","target":"sensor.label","transform":{"name":"format","pattern":"%.1f °C"}}"#

    @Test func postCreatesListsAndGetsABinding() throws {
        let store = Store()
        try store.put("sensor", ["temperature": 20.25])
        try withRunningServer(store: store) { port in
            let created = try Client.send(port: port, "POST", "/bindings", Self.label)
            #expect(created.status == 201)
            #expect(created.header("Location") == "/bindings/label")
            let binding = try created.object()
            #expect(binding["source"] as? String == "sensor.temperature")
            #expect(binding["enabled"] as? Bool == true)
            #expect(
                try store.value(of: "sensor", at: Path(dotted: "label")) == "20.2 °C"
                    || (try store.value(of: "sensor", at: Path(dotted: "label"))) == "20.3 °C")
            let list = try Client.getObject(port: port, "/bindings")
            #expect((list["bindings"] as? [[String: Any]])?.map { $0["id"] as? String } == ["label"])
            #expect(try Client.getObject(port: port, "/bindings/label")["target"] as? String == "sensor.label")
        }
    }

    @Test func anHTTPWriteFlowsThroughTheBindingAndBothChangesAreStreamed() throws {
        let store = Store()
        try store.put("sensor", ["temperature": 20])
        try withRunningServer(store: store) { port in
            #expect(try Client.send(port: port, "POST", "/bindings", Self.label).status == 201)
            let stream = try TestEventStream(port: port, target: "/events?model=sensor")
            _ = try stream.next(1)
            let write = try Client.send(port: port, "PUT", "/models/sensor/temperature", "21.5")
            #expect(write.status == 200)
            let events = try stream.next(2)
            #expect(try events.map { try $0.object()["path"] as? String } == ["/temperature", "/label"])
            #expect(try events[1].object()["value"] as? String == "21.5 °C")
            #expect(Int(events[1].id ?? "") ?? 0 > Int(events[0].id ?? "") ?? 0)
            let info = try Client.getObject(port: port, "/bindings/label")
            #expect(info["fireCount"] as? Int == 2)
        }
    }

    @Test func patchDisablesAndReEnablesAndDeleteRemoves() throws {
        let store = Store()
        try store.put("sensor", ["temperature": 20])
        try withRunningServer(store: store) { port in
            _ = try Client.send(port: port, "POST", "/bindings", Self.label)
            let disabled = try Client.send(port: port, "PATCH", "/bindings/label", #"{"enabled":false}"#)
            #expect(try disabled.object()["enabled"] as? Bool == false)
            _ = try Client.send(port: port, "PUT", "/models/sensor/temperature", "30")
            #expect(try store.value(of: "sensor", at: Path(dotted: "label")) == "20.0 °C")
            _ = try Client.send(port: port, "PATCH", "/bindings/label", #"{"enabled":true}"#)
            #expect(try store.value(of: "sensor", at: Path(dotted: "label")) == "30.0 °C")
            let deleted = try Client.request(port: port, "DELETE", "/bindings/label")
            #expect(deleted.status == 200)
            #expect(try Client.request(port: port, "GET", "/bindings/label").isProblem(404))
            _ = try Client.send(port: port, "PUT", "/models/sensor/temperature", "40")
            #expect(try store.value(of: "sensor", at: Path(dotted: "label")) == "30.0 °C")
        }
    }

    /// A binding id names the binding in `/bindings/{id}`, the data directory and a cluster's message
    /// headers (which a NATS client rewrites: CR/LF to spaces, leading whitespace dropped), so ids that
    /// would not survive all of them byte for byte are refused where the binding is made.
    @Test func bindingIdsThatWouldNotSurviveEveryHopAreRefused() throws {
        let store = Store()
        try store.put("sensor", ["temperature": 20])
        try withRunningServer(store: store) { port in
            for id in ["", " x", "x ", "x\n", "a\rb", "a/b", "tab\tid", "\u{7f}", String(repeating: "i", count: 129)] {
                let body = String(
                    decoding: JSON.object(["id": .string(id), "source": "sensor.temperature", "target": "sensor.copy"]).encoded(),
                    as: UTF8.self)
                let answer = try Client.send(port: port, "POST", "/bindings", body)
                #expect(answer.isProblem(422), "\(id.debugDescription)")
                #expect((try answer.object()["detail"] as? String)?.contains("not starting or ending with a space") == true)
            }
            #expect((try Client.getObject(port: port, "/bindings")["bindings"] as? [Any])?.isEmpty == true)
            for id in ["x y", "température", "b-1.2_3:4", String(repeating: "i", count: 128)] {
                let body = String(
                    decoding: JSON.object(["id": .string(id), "source": "sensor.temperature", "target": "sensor.copy"]).encoded(),
                    as: UTF8.self)
                #expect(try Client.send(port: port, "POST", "/bindings", body).status == 201, "\(id)")
            }
        }
        // The same rule in Swift, for ids given in a spec.
        let registry = BindingRegistry(store: store)
        let spec = BindingSpec(
            source: .init(model: "sensor", path: try Path(dotted: "temperature")),
            target: .init(model: "sensor", path: try Path(dotted: "copy")), id: "x\n")
        #expect(throws: BindingError.invalidSpec(position: "id", reason: "must be \(BindingSpec.idRule)")) {
            try registry.bind(spec)
        }
    }

    @Test func badBindingRequestsGetProblems() throws {
        let store = Store()
        try store.put("sensor", ["temperature": 20])
        try withRunningServer(store: store) { port in
            let unknown = #"{"source":"sensor.temperature","target":"sensor.x","transform":"nope"}"#
            #expect(try Client.send(port: port, "POST", "/bindings", unknown).isProblem(422))
            #expect(try Client.send(port: port, "POST", "/bindings", "{").isProblem(400))
            #expect(try Client.send(port: port, "POST", "/bindings", Self.label, type: "text/plain").isProblem(415))
            #expect(try Client.send(port: port, "POST", "/bindings", Self.label).status == 201)
            #expect(try Client.send(port: port, "POST", "/bindings", Self.label).isProblem(409))
            #expect(try Client.send(port: port, "PATCH", "/bindings/label", #"{"source":"x.y"}"#).isProblem(400))
            #expect(try Client.send(port: port, "PATCH", "/bindings/missing", #"{"enabled":false}"#).isProblem(404))
            #expect(try Client.request(port: port, "DELETE", "/bindings/missing").isProblem(404))
            let wrongMethod = try Client.request(port: port, "DELETE", "/bindings")
            #expect(wrongMethod.isProblem(405))
            #expect(wrongMethod.header("Allow") == "GET, HEAD, POST")
            #expect(try Client.getObject(port: port, "/bindings")["bindings"] as? [Any] != nil)
            #expect((try Client.getObject(port: port, "/bindings")["bindings"] as? [Any])?.count == 1)
        }
    }

    @Test func httpWritesToAValidatedTargetAreCheckedBeforeTheyCommit() throws {
        let store = Store()
        try store.put("panel", ["level": 10])
        try store.put("device", ["level": 10, "mode": "auto"])
        try withRunningServer(store: store) { port in
            let strict =
                #"{"id":"level","source":"panel.level","target":"device.level","mode":"twoWay","validate":{"type":"number","min":0,"max":100}}"#
            #expect(try Client.send(port: port, "POST", "/bindings", strict).status == 201)
            let before = store.lastSequence
            let rejected = try Client.send(port: port, "PUT", "/models/device/level", "150")
            #expect(rejected.isProblem(422))
            #expect(try rejected.object()["detail"] as? String != nil)
            let form = try Client.send(
                port: port, "POST", "/models/device", "level=-5&mode=manual",
                type: "application/x-www-form-urlencoded")
            #expect(form.isProblem(422))
            let merge = try Client.send(
                port: port, "PATCH", "/models/device", #"{"level":"high"}"#,
                type: "application/merge-patch+json")
            #expect(merge.isProblem(422))
            #expect(store.lastSequence == before)
            #expect(try store.value(of: "device") == ["level": 10, "mode": "auto"])
            let accepted = try Client.send(port: port, "PUT", "/models/device/level", "42")
            #expect(accepted.status == 200)
            #expect(try store.value(of: "panel", at: Path(dotted: "level")) == 42)
        }
    }

    @Test func aCoercingRuleWritesTheCoercedValue() throws {
        let store = Store()
        try store.put("panel", ["level": 10])
        try store.put("device", ["level": 10])
        try withRunningServer(store: store) { port throws in
            let clamp = #"{"source":"panel.level","target":"device.level","mode":"twoWay","validate":{"min":0,"max":100,"coerce":true}}"#
            #expect(try Client.send(port: port, "POST", "/bindings", clamp).status == 201)
            #expect(try Client.send(port: port, "PUT", "/models/device/level", "150").status == 200)
            #expect(try store.value(of: "device", at: Path(dotted: "level")) == 100)
            let patch = #"[{"op":"replace","path":"/level","value":-3}]"#
            #expect(try Client.send(port: port, "PATCH", "/models/device", patch, type: "application/json-patch+json").status == 200)
            #expect(try store.value(of: "device", at: Path(dotted: "level")) == 0)
        }
    }

    @Test func aHeadWriteReachesTheEndOfFortyChainedBindingsPostedOverHTTP() throws {
        // Propagation used to stop at step 32, leaving c.v33…c.v40 stale with a false "loop" error.
        let store = Store()
        try store.put("c", ["v0": 0])
        try withRunningServer(store: store) { port in
            for index in 0..<40 {
                let link = #"{"id":"link\#(index)","source":"c.v\#(index)","target":"c.v\#(index + 1)"}"#
                #expect(try Client.send(port: port, "POST", "/bindings", link).status == 201)
            }
            #expect(try Client.send(port: port, "PUT", "/models/c/v0", "7").status == 200)
            var tail: Any?
            for _ in 0..<200 {
                tail = try Client.request(port: port, "GET", "/models/c/v40").json()
                if tail as? Int == 7 { break }
                Thread.sleep(forTimeInterval: 0.01)
            }
            #expect(tail as? Int == 7)
            #expect(try Client.request(port: port, "GET", "/models/c/v33").json() as? Int == 7)
            let last = try Client.getObject(port: port, "/bindings/link39")
            #expect(last["lastError"] is NSNull)
            #expect(last["fireCount"] as? Int == 2, "its creation and the head write")
        }
    }
}
