import Foundation
import Testing
@testable import LiveBind

@Suite("State database") struct StateDatabaseTests {
    /// A store journaled to a database in `directory`, as a restarted server would open it.
    static func open(_ directory: String, retainedEvents: Int = 4096, checkpointBytes: Int = 1 << 20)
        throws -> (Store, StateDatabase)
    {
        let database = try StateDatabase(directory: directory, retainedEvents: retainedEvents, checkpointBytes: checkpointBytes)
        let contents = try database.load()
        return (Store(restoring: contents.models, lastSequence: contents.lastSequence, log: database), database)
    }

    @Test func everyKindOfWriteIsReadBackWithItsRevisionAndTheSequence() throws {
        try withTemporaryDirectory { directory in
            do {
                let (store, _) = try Self.open(directory)
                try store.put("sensor", ["temperature": 20.5, "readings": []])
                try store.set(21.5, at: Path(dotted: "temperature"), in: "sensor")
                try store.append(["id": "r1", "value": 1], to: Path(dotted: "readings"), in: "sensor")
                try store.mergePatch(["unit": "C"], in: "sensor")
                try store.jsonPatch([["op": "add", "path": "/readings/-", "value": 2]], in: "sensor")
                try store.move(from: 1, to: 0, in: Path(dotted: "readings"), of: "sensor")
                try store.put("gone", [:])
                try store.drop("gone")
                #expect(store.lastSequence == 8)
            }
            let (store, _) = try Self.open(directory)
            #expect(store.lastSequence == 8)
            #expect(store.modelNames().map(\.name) == ["sensor"])
            let sensor = try store.snapshot("sensor")
            #expect(sensor.revision == 6)
            #expect(sensor.value == ["temperature": 21.5, "readings": [2, ["id": "r1", "value": 1]], "unit": "C"])
            #expect(try store.set(22, at: Path(dotted: "temperature"), in: "sensor").sequence == 9)
        }
    }

    @Test func theLogKeepsTheLastNCommitsWithTheirChanges() throws {
        try withTemporaryDirectory { directory in
            let (store, database) = try Self.open(directory, retainedEvents: 5)
            try store.put("m", ["v": 0])
            for value in 1...9 { try store.set(.int(value), at: Path(dotted: "v"), in: "m") }
            database.flush()
            let commits = database.recentCommits()
            #expect(commits.map(\.sequence) == [6, 7, 8, 9, 10])
            let last = try #require(commits.last)
            #expect(last.revision == 10)
            guard case .changes(let changes) = last.kind else { Issue.record("not changes"); return }
            #expect(changes == [Change(kind: .set, path: try Path(dotted: "v"), value: 9)])
        }
    }

    @Test func aWriteTheDiskRefusesIsNeverDurableAndTheLogTakesNoMore() throws {
        try withTemporaryDirectory { directory in
            do {
                let (store, database) = try Self.open(directory)
                try store.put("m", ["items": [], "v": 0])
                try store.waitUntilDurable(through: store.lastSequence)
                // Cap the file at its current size: the next write that needs a page fails with SQLITE_FULL.
                try database.withConnection { connection in
                    let pages = try connection.database.prepare("PRAGMA page_count")
                    _ = try pages.step()
                    try connection.database.execute("PRAGMA max_page_count = \(pages.int64(0))")
                }
                let big = JSON.string(String(repeating: "x", count: 200_000))
                let written = try store.append(big, to: Path(dotted: "items"), in: "m")
                #expect(throws: StoreError.self) { try store.waitUntilDurable(through: written.sequence) }
                // What clients may see is what is on disk.
                #expect(store.visibleSequence == 1)
                #expect(store.visibleSnapshot(models: ["m"]).models.first?.value == ["items": [], "v": 0])
                // Every later write is refused, and changes nothing.
                #expect(throws: StoreError.self) { try store.set(1, at: Path(dotted: "v"), in: "m") }
                #expect(throws: StoreError.self) { try store.put("other", [:]) }
                #expect(store.lastSequence == 2)
            }
            // A restart reads what was durable, and takes writes again.
            let (store, _) = try Self.open(directory)
            #expect(store.lastSequence == 1)
            #expect(try store.value(of: "m") == ["items": [], "v": 0])
            #expect(try store.set(1, at: Path(dotted: "v"), in: "m").sequence == 2)
        }
    }

    @Test func bindingsAndEnabledFlagsAreKeptAndForgotten() throws {
        try withTemporaryDirectory { directory in
            do {
                let (_, database) = try Self.open(directory)
                try database.saveBinding(id: "a", definition: ["id": "a", "source": "m.x", "target": "m.y"])
                try database.saveBinding(id: "b", definition: ["id": "b", "source": "m.x", "target": "m.z"])
                try database.saveEnabled(id: "b", false)
                try database.saveEnabled(id: "demo", false)
                try database.saveBinding(id: "c", definition: ["id": "c", "source": "m.x", "target": "m.w"])
                try database.deleteBinding(id: "c")
            }
            let (_, database) = try Self.open(directory)
            let (created, enabled) = database.bindings()
            #expect(created.map(\.id) == ["a", "b"])
            #expect(created[1].definition == ["id": "b", "source": "m.x", "target": "m.z"])
            #expect(enabled.map(\.id) == ["b", "demo"])
            #expect(enabled.map(\.enabled) == [false, false])
        }
    }

    @Test func aFileOfAnotherKindIsRefused() throws {
        try withTemporaryDirectory { directory in
            let database = try SQLiteConnection(path: directory + "/" + StateDatabase.fileName)
            try database.execute("CREATE TABLE notes(text TEXT)")
            #expect(throws: StateDatabaseError.self) { try StateDatabase(directory: directory, retainedEvents: 10) }
        }
    }
}
