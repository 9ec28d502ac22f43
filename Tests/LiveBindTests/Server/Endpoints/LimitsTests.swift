import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// The store's limits over HTTP: each refusal is a problem naming the limit and its flag, and changes nothing.
@Suite("Limits over HTTP") struct LimitsTests {
    typealias Client = TestHTTPClient

    /// The model's body and ETag, to compare before and after a refused write.
    private func state(_ port: Int, _ model: String) throws -> (String, String?) {
        let response = try Client.request(port: port, "GET", "/models/\(model)")
        return (response.text, response.header("ETag"))
    }

    private func expectLimitProblem(
        _ response: TestHTTPResponse, _ status: Int, flag: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(response.isProblem(status), "\(response.status) \(response.text)", sourceLocation: sourceLocation)
        let problem = try response.object()
        #expect(problem["type"] as? String == "urn:livebind:problem:limit-exceeded", sourceLocation: sourceLocation)
        #expect((problem["detail"] as? String)?.contains(flag) == true, "\(problem)", sourceLocation: sourceLocation)
    }

    @Test func aPatchCopyingTheWholeModelFortyTimesIsRefusedQuicklyAndTheServerStaysUp() throws {
        let store = Store()
        try store.put("m", ["seed": .string(String(repeating: "s", count: 1_000))])
        try withRunningServer(store: store) { port in
            let before = try state(port, "m")
            let ops = (0..<40).map { #"{"op":"copy","from":"","path":"/c\#($0)"}"# }.joined(separator: ",")
            let response = try Client.send(port: port, "PATCH", "/models/m", "[\(ops)]", type: "application/json-patch+json")
            try expectLimitProblem(response, 413, flag: "--max-model-size")
            #expect(try state(port, "m") == before)
            #expect(try Client.request(port: port, "GET", "/healthz").status == 200)
        }
    }

    @Test func deepValuesAddedOneBelowTheOtherAreRefusedAtTheDepthLimit() throws {
        let store = Store()
        try store.put("m", [:])
        try withRunningServer(store: store) { port in
            // Issue 13: 400-deep values, each one level below the last, crashed the server after 53.
            let deep = String(repeating: #"{"a":"#, count: 400) + "1" + String(repeating: "}", count: 400)
            let response = try Client.send(port: port, "PUT", "/models/m/a", deep)
            try expectLimitProblem(response, 422, flag: "--max-depth")
            // Growth by successive writes, 10 levels at a time, stops at 64.
            var pointer = "/a"
            var last = 0
            let ten = String(repeating: #"{"a":"#, count: 10) + "1" + String(repeating: "}", count: 10)
            for _ in 0..<20 {
                last = try Client.send(port: port, "PUT", "/models/m\(pointer)", ten).status
                if last != 200 { break }
                pointer += String(repeating: "/a", count: 10)
            }
            #expect(last == 422)
            #expect(try Client.request(port: port, "GET", "/healthz").status == 200)
        }
    }

    @Test func eachLimitIsRaisedOrLoweredByItsConfigurationField() throws {
        let store = Store(
            limits: {
                var limits = StoreLimits()
                limits.maxDepth = 3
                limits.maxModelBytes = 300
                limits.maxStoreBytes = 500 + 2 * StoreLimits.modelOverhead
                limits.maxPatchOperations = 2
                return limits
            }())
        try store.put("m", ["list": []])
        try withRunningServer(store: store) { port in
            let before = try state(port, "m")
            try expectLimitProblem(try Client.send(port: port, "POST", "/models/m/list", #"[[1]]"#), 422, flag: "--max-depth")
            let long = "\"" + String(repeating: "x", count: 400) + "\""
            try expectLimitProblem(try Client.send(port: port, "POST", "/models/m/list", long), 413, flag: "--max-model-size")
            try expectLimitProblem(
                try Client.send(port: port, "PATCH", "/models/m", #"{"big":\#(long)}"#, type: "application/merge-patch+json"),
                413, flag: "--max-model-size")
            let three = #"[{"op":"add","path":"/a","value":1},{"op":"add","path":"/b","value":1},{"op":"add","path":"/c","value":1}]"#
            try expectLimitProblem(
                try Client.send(port: port, "PATCH", "/models/m", three, type: "application/json-patch+json"),
                422, flag: "--max-patch-operations")
            try expectLimitProblem(
                try Client.send(
                    port: port, "POST", "/models/m", "k=" + String(repeating: "y", count: 400),
                    type: "application/x-www-form-urlencoded"), 413, flag: "--max-model-size")
            #expect(try state(port, "m") == before)
            let filler = #"{"v":"\#(String(repeating: "f", count: 250))"}"#
            #expect(try Client.send(port: port, "PUT", "/models/n", filler).status == 201)
            try expectLimitProblem(try Client.send(port: port, "PUT", "/models/o", filler), 413, flag: "--max-store-size")
            #expect(try Client.request(port: port, "GET", "/models/o").status == 404)
        }
    }

    @Test func aFormKeyWithTenThousandComponentsIsRefusedAtTheDepthLimit() throws {
        let store = Store()
        try store.put("m", [:])
        try withRunningServer(store: store) { port in
            let before = try state(port, "m")
            let key = Array(repeating: "a", count: 10_000).joined(separator: ".")
            let response = try Client.send(port: port, "POST", "/models/m", "\(key)=1", type: "application/x-www-form-urlencoded")
            try expectLimitProblem(response, 422, flag: "--max-depth")
            #expect(try state(port, "m") == before)
            let ok = Array(repeating: "a", count: 60).joined(separator: ".")
            #expect(try Client.send(port: port, "POST", "/models/m", "\(ok)=1", type: "application/x-www-form-urlencoded").status == 200)
        }
    }

    @Test func bindingsPastMaxBindingsAreRefused() throws {
        let store = Store()
        try store.put("c", ["v0": 1])
        try withRunningServer(store: store, configure: { $0.limits.maxBindings = 3 }) { port in
            for i in 0..<3 {
                let made = try Client.send(port: port, "POST", "/bindings", #"{"source": "c.v0", "target": "c.t\#(i)"}"#)
                #expect(made.status == 201)
            }
            let refused = try Client.send(port: port, "POST", "/bindings", #"{"source": "c.v0", "target": "c.t9"}"#)
            try expectLimitProblem(refused, 422, flag: "--max-bindings")
            #expect(try Client.request(port: port, "DELETE", "/bindings/b1").status == 200)
            #expect(try Client.send(port: port, "POST", "/bindings", #"{"source": "c.v0", "target": "c.t9"}"#).status == 201)
        }
    }
}
