import Foundation
import Testing
@testable import LiveBind
@testable import LiveBindEngine

/// docs/Bindings.md's Swift example of views is the code below, which runs.
@Suite("Views in the docs") struct ViewsDocTests {
    @Test func swiftExampleRuns() throws {
        // DOC-BEGIN swift views
        let store = Store()
        try store.put(
            "orders",
            [
                "items": [
                    ["id": "o1", "status": "open", "time": 5, "total": 120],
                    ["id": "o2", "status": "held", "time": 9, "total": 300],
                    ["id": "o3", "status": "open", "time": 7, "total": 40]
                ]
            ])
        let items = Path(["items"])
        let query = try ViewQuery(where: "and(status:eq:open,total:ge:100)", order: "-time", limit: 20)
        let view = ArrangedArray(try store.value(of: "orders", at: items).arrayValue ?? [], query: query)
        let before = view.rows.map { $0["id"] }  // ["o1"]

        // What a store observer of the array gets, given to the view: o2 opens, and is newer than o1.
        let change = Change(kind: .set, path: Path(["items", "1", "status"]), value: "open")
        let shown = view.apply(change, at: items)  // an insert at 0 of o2
        let after = view.rows.map { $0["id"] }  // ["o2", "o1"]
        // DOC-END swift views
        #expect(before == ["o1"] && after == ["o2", "o1"] && view.matchCount == 2)
        #expect(shown.map(\.kind) == [.insert] && shown[0].index == 0 && shown[0].key == "o2")
    }

    @Test func docShowsTheTestedSwiftExample() throws {
        let document = try String(contentsOf: repositoryRoot().appendingPathComponent("docs/Bindings.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let example = try #require(
            DocumentedExample.shownAndTested(
                document: document,
                marker: "<!-- swift example: compiled and run by Tests/LiveBindTests/Engine/Views/ViewsDocTests.swift -->",
                source: source, begin: "// DOC-BEGIN swift views", end: "// DOC-END swift views"))
        #expect(example.shown == example.tested)
    }
}
