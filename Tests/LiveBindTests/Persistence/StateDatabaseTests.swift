import Foundation
import Testing
@testable import LiveBind

@Suite("State database") struct StateDatabaseTests {
    /// A store journaled to a database in `directory`, as a restarted server would open it.
    static func open(_ directory: String, retainedEvents: Int = 4096) throws -> (Store, StateDatabase) {
        let database = try StateDatabase(directory: directory, retainedEvents: retainedEvents)
        let contents = try database.load()
        return (Store(restoring: contents.models, lastSequence: contents.lastSequence, journal: database), database)
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

    @Test func theEventLogKeepsTheLastNCommitsAsTheStreamEncodesThem() throws {
        try withTemporaryDirectory { directory in
            let (store, database) = try Self.open(directory, retainedEvents: 5)
            var frames: [UInt64: [UInt8]] = [:]
            try store.put("m", ["v": 0])
            for value in 1...9 { try store.set(.int(value), at: Path(dotted: "v"), in: "m") }
            for event in database.recentEvents() { frames[event.sequence] = event.bytes }
            #expect(database.recentEvents().map(\.sequence) == [6, 7, 8, 9, 10])
            let expected = EventEncoder.frame(for: Commit(sequence: 10, model: "m", revision: 10,
                                                          kind: .changes([Change(kind: .set, path: try Path(dotted: "v"), value: 9)])))
            #expect(frames[10] == expected.bytes)
        }
    }

    @Test func aWriteTheDiskRefusesFailsAndChangesNothing() throws {
        try withTemporaryDirectory { directory in
            let (store, database) = try Self.open(directory)
            try store.put("m", ["items": [], "v": 0])
            // Cap the file at its current size: the next write that needs a page fails with SQLITE_FULL.
            try database.withConnection { connection in
                let pages = try connection.database.prepare("PRAGMA page_count")
                _ = try pages.step()
                try connection.database.execute("PRAGMA max_page_count = \(pages.int64(0))")
            }
            let big = JSON.string(String(repeating: "x", count: 200_000))
            let before = try store.snapshot("m")
            let attempts: [(String, () throws -> Void)] = [
                ("append", { try store.append(big, to: Path(dotted: "items"), in: "m") }),
                ("set", { try store.set(big, at: Path(dotted: "v"), in: "m") }),
                ("merge patch", { try store.mergePatch(["a": big, "b": 1], in: "m") }),
                ("put", { try store.put("m", ["v": big]) }),
                ("put new", { try store.put("other", ["v": big]) }),
            ]
            for (name, attempt) in attempts {
                #expect(throws: StoreError.self, "\(name)") { try attempt() }
                #expect(try store.snapshot("m").value == before.value, "\(name)")
                #expect(try store.snapshot("m").revision == before.revision, "\(name)")
                #expect(store.lastSequence == 1, "\(name)")
            }
            #expect(store.modelNames().map(\.name) == ["m"])
            // A small write still fits, and gets the next id: nothing was used up by the failures.
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
