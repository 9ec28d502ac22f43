import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// `PATCH /models` and `Store.write(_:)`: one write to several models, all or nothing.
@Suite("Writes to several models") struct SeveralModelsTests {
    typealias Client = TestHTTPClient

    @Test func everyModelChangesOrNone() throws {
        let store = Store()
        try store.put("a", ["n": 1])
        try store.put("b", ["list": [1]])
        let results = try store.write([
            Store.ModelEdits("a", ifRevision: 1) { (editor: inout ModelEditor) throws(StoreError) in try editor.set(2, at: Path(["n"])) },
            Store.ModelEdits("b") { (editor: inout ModelEditor) throws(StoreError) in _ = try editor.append(2, to: Path(["list"])) }
        ])
        // One write, one event id (the last commit's) for both models; a revision each.
        #expect(results.map(\.sequence) == [4, 4] && results.map(\.revision) == [2, 2] && results[1].index == 1)
        // The second model's edit fails: the first one's is undone, nothing is committed.
        #expect(throws: ModelWriteError(model: "b", error: .indexOutOfRange(path: Path(["list"]), index: 9, count: 2))) {
            try store.write([
                Store.ModelEdits("a") { (editor: inout ModelEditor) throws(StoreError) in try editor.set(3, at: Path(["n"])) },
                Store.ModelEdits("b") { (editor: inout ModelEditor) throws(StoreError) in try editor.remove(at: Path(["list", "9"])) }
            ])
        }
        #expect(try store.value(of: "a") == ["n": 2] && store.lastSequence == 4)
        // A stale revision, a missing model, a model named twice.
        #expect(throws: ModelWriteError(model: "a", error: .revisionMismatch(expected: 1, actual: 2))) {
            try store.write([Store.ModelEdits("b") { _ in }, Store.ModelEdits("a", ifRevision: 1) { _ in }])
        }
        #expect(throws: ModelWriteError(model: "c", error: .modelNotFound("c"))) { try store.write([Store.ModelEdits("c") { _ in }]) }
        #expect(throws: ModelWriteError.self) { try store.write([Store.ModelEdits("a") { _ in }, Store.ModelEdits("a") { _ in }]) }
        #expect(store.lastSequence == 4)
    }

    @Test func theStoreSizeCountsEveryModelOfTheWrite() throws {
        var limits = StoreLimits()
        limits.maxStoreBytes = 2 * (StoreLimits.modelOverhead + 2) + 100
        let store = Store(limits: limits)
        try store.put("a", [:])
        try store.put("b", [:])
        let text = JSON.string(String(repeating: "x", count: 60))
        // Each edit alone fits; together they do not.
        #expect(throws: ModelWriteError.self) {
            try store.write([
                Store.ModelEdits("a") { (editor: inout ModelEditor) throws(StoreError) in try editor.set(text, at: Path(["t"])) },
                Store.ModelEdits("b") { (editor: inout ModelEditor) throws(StoreError) in try editor.set(text, at: Path(["t"])) }
            ])
        }
        #expect(try store.value(of: "a") == [:] && store.value(of: "b") == [:])
    }

    /// The work one write may measure (four times the model size limit) is shared by its models.
    @Test func oneWritesWorkBudgetCoversEveryModel() throws {
        var limits = StoreLimits()
        limits.maxModelBytes = 1_000
        let store = Store(limits: limits)
        try store.put("a", [:])
        try store.put("b", [:])
        let text = JSON.string(String(repeating: "x", count: 700))
        func churn(_ editor: inout ModelEditor) throws(StoreError) {
            for _ in 0..<4 { try editor.set(text, at: Path(["t"])) }  // about 2,800 bytes measured
        }
        #expect(throws: Never.self) {
            try store.write([Store.ModelEdits("a") { (editor: inout ModelEditor) throws(StoreError) in try churn(&editor) }])
        }
        #expect(throws: ModelWriteError.self) {
            try store.write([
                Store.ModelEdits("a") { (editor: inout ModelEditor) throws(StoreError) in try churn(&editor) },
                Store.ModelEdits("b") { (editor: inout ModelEditor) throws(StoreError) in try churn(&editor) }
            ])
        }
    }

    /// With a data directory the models of one write are on disk together: a new server has both.
    @Test func withADataDirectoryTheWriteIsKeptWhole() throws {
        try withTemporaryDirectory { directory in
            var configuration = LiveBindServer.Configuration()
            configuration.persistence.dataDirectory = directory
            let first = try LiveBindServer(configuration: configuration)
            try first.store.put("a", ["n": 0])
            try first.store.put("b", ["n": 0])
            let results = try first.store.write([
                Store.ModelEdits("a") { (editor: inout ModelEditor) throws(StoreError) in try editor.set(1, at: Path(["n"])) },
                Store.ModelEdits("b") { (editor: inout ModelEditor) throws(StoreError) in try editor.set(2, at: Path(["n"])) }
            ])
            try first.store.waitUntilDurable(through: results[1].sequence)
            first.stop()
            let second = try LiveBindServer(configuration: configuration)
            #expect(try second.store.value(of: "a") == ["n": 1] && second.store.value(of: "b") == ["n": 2])
            #expect(second.store.lastSequence == results[1].sequence)
        }
    }

    @Test func overHTTPTheAnswerNamesEachModelAndAProblemNamesTheModel() throws {
        let store = Store()
        try store.put("sensor", ["t": 20])
        try store.put("orders", ["items": []])
        try withRunningServer(store: store) { port in
            let written = try Client.send(
                port: port, "PATCH", "/models",
                #"{"sensor":{"merge":{"t":21},"ifMatch":1},"orders":{"patch":[{"op":"add","path":"/items/-","value":{"id":1}}]}}"#)
            #expect(written.status == 200, "\(written.text)")
            #expect(written.text == #"{"id":"4","models":{"sensor":{"id":"4","rev":2},"orders":{"id":"4","rev":2}}}"#)
            #expect(written.header("LiveBind-Event-ID") == "4")
            let stale = try Client.send(
                port: port, "PATCH", "/models", #"{"orders":{"merge":{"x":1}},"sensor":{"merge":{"t":0},"ifMatch":1}}"#)
            #expect(stale.status == 412 && stale.text.contains("model sensor"))
            let failing = try Client.send(
                port: port, "PATCH", "/models",
                #"{"sensor":{"merge":{"t":0}},"orders":{"patch":[{"op":"test","path":"/items/0/id","value":2}]}}"#)
            #expect(failing.status == 422 && failing.text.contains("model orders"))
            #expect(try Client.request(port: port, "GET", "/models/sensor").text == #"{"t":21}"#)
            for body in [
                #"[]"#, #"{}"#, #"{"sensor":{}}"#, #"{"sensor":{"merge":{},"patch":[]}}"#, #"{"sensor":{"merge":{},"ifMatch":"1"}}"#
            ] {
                #expect(try Client.send(port: port, "PATCH", "/models", body).status == 400, "\(body)")
            }
            #expect(try Client.send(port: port, "PATCH", "/models", #"{"nope":{"merge":{}}}"#).status == 404)
        }
    }
}
