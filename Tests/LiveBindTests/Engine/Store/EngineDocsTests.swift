import DequeModule
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// Runs the Quick Start of docs/Engine.md, so that it keeps compiling and doing what it says.
@Suite("Engine docs") struct EngineDocsTests {
    @Test func quickStartWorksAsDocumented() throws {
        let recorder = EngineRecorder<Change>()

        let store = Store()
        try store.put("sensor", ["temperature": 20.5, "readings": []])

        let temperature = try Path(dotted: "temperature")  // or Path(pointer: "/temperature")
        let token = store.observe(temperature, in: "sensor") { change in
            recorder.handler(change)  // the docs print change.kind and change.value
        }
        try store.set(21.0, at: temperature, in: "sensor")
        let appended = try store.append(["id": 1, "v": 3], to: Path(["readings"]), in: "sensor")
        let merged = try store.mergePatch(["temperature": 22, "unit": "C"], in: "sensor")
        token.cancel()

        #expect(
            recorder.events == [
                Change(kind: .set, path: temperature, value: 21.0),
                Change(kind: .set, path: temperature, value: 22)
            ])
        #expect(appended.index == 0)
        #expect(merged.sequence == 4 && merged.revision == 4)
        #expect(try store.value(of: "sensor") == ["temperature": 22, "readings": [["id": 1, "v": 3]], "unit": "C"])
    }

    @Test func limitsWorkAsDocumented() throws {
        var limits = StoreLimits()
        limits.maxModelBytes = 1 << 20
        let store = Store(limits: limits)
        #expect(throws: StoreError.limitExceeded(.modelSize, limit: 1_048_576, actual: 4_194_317)) {
            try store.put("log", ["lines": .array(Deque(repeating: "x", count: 1 << 20))])
        }
        #expect(StoreLimit.modelSize.description == "maxModelBytes")
        #expect(throws: StoreError.modelNotFound("log")) { try store.size(of: "log") }
    }

    @Test func observersSurviveDropAndSeeTheModelAgain() throws {
        let store = Store()
        let recorder = EngineRecorder<Change>()
        let token = store.observe(Path(["x"]), in: "later", recorder.handler)
        try store.put("later", ["x": 1])
        try store.drop("later")
        let again = try store.put("later", ["x": 2])
        #expect(again.created && again.result.revision == 1)
        #expect(recorder.events.map(\.kind) == [.set, .remove, .set])
        token.cancel()
    }
}
