import DequeModule
import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

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

    /// What a restart reads for resumes: no more record bytes than the hub keeps (but always the
    /// newest), every commit a lagging history lacks, and a current model's value instead of a
    /// second parsed copy of the snapshot that made it.
    @Test func recentCommitsStopAtTheByteBudgetUnlessAHistoryWantsThem() throws {
        try withTemporaryDirectory { directory in
            let (store, database) = try Self.open(directory)
            for value in 1...6 { try store.put("m\(value)", ["text": .string(String(repeating: "x", count: 1000))]) }
            database.flush()
            #expect(database.recentCommits().map(\.sequence) == [1, 2, 3, 4, 5, 6])
            let size: (Commit) -> Int = { _ in 1000 }
            #expect(database.recentCommits(bytes: 2500, size: size).map(\.sequence) == [5, 6])
            #expect(database.recentCommits(bytes: 1, size: size).map(\.sequence) == [6])
            #expect(database.recentCommits(bytes: 1, size: size, wantedAfter: 3).map(\.sequence) == [4, 5, 6])
            func value(_ commit: Commit?) -> JSON? { if case .snapshot(let value) = commit?.kind { value } else { nil } }
            // The store's value is taken for a model's newest snapshot when the store has one at its
            // revision (the members' order shows which was taken), and only then.
            try store.put("pair", ["a": 1, "b": 2])
            database.flush()
            let shared = database.recentCommits(current: { model, revision in
                revision == 1 && model == "pair" ? ["b": 2, "a": 1] : nil
            })
            #expect(value(shared.last)?.encoded() == Array(#"{"b":2,"a":1}"#.utf8))
            #expect(value(shared.first) == ["text": .string(String(repeating: "x", count: 1000))])
            // Made again after a drop, a model is at revision 1 again: its old snapshot stays its own.
            try store.drop("m6")
            try store.put("m6", ["text": "again"])
            database.flush()
            let again = database.recentCommits(current: { [store] model, revision in
                store.snapshot(models: [model]).models.first { $0.revision == revision }?.value
            })
            #expect(value(again.first { $0.model == "m6" }) == ["text": .string(String(repeating: "x", count: 1000))])
            #expect(value(again.last) == ["text": "again"])
        }
    }

    /// A checkpoint keeps each model's counted size and the revision it was counted at; a restart
    /// takes it instead of measuring the document again, but not at another revision, not when it is
    /// smaller than the document, not after an older LiveBind rewrote the document (even at the same
    /// revision, as a model dropped and made again can be), and not when there is none.
    @Test func aCheckpointKeepsEachModelsSizeForTheRestart() throws {
        let names = ["kept", "stale", "rewritten", "garbage", "unsized"]
        try withTemporaryDirectory { directory in
            var sizes: [String: Int] = [:]
            do {
                let (store, database) = try Self.open(directory, checkpointBytes: 1)
                for name in names { try store.put(name, ["v": 1, "list": [1, 2, 3], "name": .string(name)]) }
                try store.set(2, at: Path(dotted: "v"), in: "kept")
                database.flush()
                // Later batches carry the checkpoint of the models before them (a batch after one
                // that wrote a checkpoint carries none: three are always enough).
                for later in 0..<3 {
                    try store.put("later\(later)", [:])
                    database.flush()
                }
                for name in names { sizes[name] = try store.size(of: name) }
                #expect(
                    try Self.integer(
                        database,
                        "SELECT count(*) FROM models WHERE name NOT LIKE 'later%' AND size IS NOT NULL AND size_revision = revision") == 5)
                #expect(try Self.integer(database, "SELECT size FROM models WHERE name = 'kept'") == Int64(sizes["kept"]!))
                database.close()
            }
            do {
                let file = try SQLiteConnection(path: directory + "/" + StateDatabase.fileName)
                try file.execute(
                    """
                    UPDATE models SET size = 1000 WHERE name = 'kept';
                    UPDATE models SET size = 1000, size_revision = revision + 1 WHERE name = 'stale';
                    UPDATE models SET revision = revision, document = CAST('{"v":9}' AS BLOB) WHERE name = 'rewritten';
                    UPDATE models SET size = 1 WHERE name = 'garbage';
                    UPDATE models SET size = NULL WHERE name = 'unsized';
                    """)
            }
            let (store, _) = try Self.open(directory)
            #expect(try store.size(of: "kept") == 1000)  // taken as it was kept, not measured
            #expect(try store.size(of: "stale") == sizes["stale"])
            #expect(try store.size(of: "rewritten") == JSON.object(["v": 9]).countedSize)
            #expect(try store.size(of: "garbage") == sizes["garbage"])
            #expect(try store.size(of: "unsized") == sizes["unsized"])
        }
    }

    /// A checkpointed document that is not a JSON object makes the directory unusable, naming the model,
    /// wherever it falls among the rows parsed together.
    @Test func aCorruptCheckpointRowIsAClearErrorNamingTheModel() throws {
        try withTemporaryDirectory { directory in
            do {
                let (store, database) = try Self.open(directory, checkpointBytes: 1)
                for index in 0..<40 { try store.put("m\(index)", ["v": .int(index)]) }
                database.flush()
                for later in 0..<3 {
                    try store.put("later\(later)", [:])
                    database.flush()
                }
                database.close()
            }
            do {
                let file = try SQLiteConnection(path: directory + "/" + StateDatabase.fileName)
                try file.execute("UPDATE models SET document = CAST('[1,' AS BLOB) WHERE name = 'm17'")
            }
            #expect {
                _ = try Self.open(directory)
            } throws: { error in
                "\(error)".contains("model 'm17' does not hold a JSON object")
            }
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

    /// Reads one integer with `sql` from the database.
    static func integer(_ database: StateDatabase, _ sql: String) throws -> Int64 {
        try database.withConnection { connection in
            let statement = try connection.database.prepare(sql)
            _ = try statement.step()
            return statement.int64(0)
        }
    }

    @Test func aWriteToALargeModelLogsOnlyWhatItChanged() throws {
        try withTemporaryDirectory { directory in
            let (store, database) = try Self.open(directory)
            let rows = JSON.array(Deque((0..<10_000).map { ["id": .string("r\($0)"), "v": 0, "name": "a row of the large model"] }))
            try store.put("big", ["rows": rows])
            #expect(try store.size(of: "big") > 500_000)
            for value in 1...20 { try store.set(.int(value), at: Path(pointer: "/rows/5000/v"), in: "big") }
            try store.waitUntilDurable(through: store.lastSequence)
            // The put logged the document once; each set logged a few dozen bytes; no checkpoint yet.
            #expect(try Self.integer(database, "SELECT max(length(record)) FROM log WHERE sequence > 1") < 100)
            #expect(try Self.integer(database, "SELECT count(*) FROM models") == 0)
            #expect(try Self.integer(database, "SELECT count(*) FROM log") == 21)
        }
    }

    @Test func checkpointsWriteChangedModelsWholeAndARestartReplaysTheLogAfterThem() throws {
        try withTemporaryDirectory { directory in
            do {
                let (store, database) = try Self.open(directory, retainedEvents: 5, checkpointBytes: 400)
                try store.put("a", ["v": 0])
                try store.put("b", ["v": 0])
                for value in 1...100 {
                    try store.set(.int(value), at: Path(dotted: "v"), in: "a")
                    try store.waitUntilDurable(through: store.lastSequence)
                }
                try store.put("c", ["v": 1])
                try store.drop("b")
                try store.waitUntilDurable(through: store.lastSequence)
                let checkpoint = try Self.integer(database, "SELECT value FROM meta WHERE key = 'checkpoint'")
                #expect(checkpoint > 50)
                // Only the last checkpoint's models, and the log after it (plus the last five) remain.
                #expect(try Self.integer(database, "SELECT count(*) FROM log") <= 104 - checkpoint + 5)
                #expect(try Self.integer(database, "SELECT min(sequence) FROM log") > 50)
                #expect(try Self.integer(database, "SELECT revision FROM models WHERE name = 'a'") < 101)
            }
            let (store, _) = try Self.open(directory)
            #expect(store.lastSequence == 104)
            #expect(store.modelNames().map(\.name) == ["a", "c"])
            #expect(try store.snapshot("a").revision == 101)
            #expect(try store.value(of: "a") == ["v": 100])
            #expect(try store.value(of: "c") == ["v": 1])
        }
    }

    @Test func aFormatOneDirectoryIsUpgradedWithItsModelsAndSequence() throws {
        try withTemporaryDirectory { directory in
            do {
                let old = try SQLiteConnection(path: directory + "/" + StateDatabase.fileName)
                try old.execute(
                    """
                    CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);
                    CREATE TABLE models(name TEXT PRIMARY KEY, revision INTEGER NOT NULL, document BLOB NOT NULL);
                    CREATE TABLE events(sequence INTEGER PRIMARY KEY, model TEXT NOT NULL, frame BLOB NOT NULL);
                    CREATE TABLE bindings(position INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
                                          definition BLOB NOT NULL);
                    CREATE TABLE binding_states(id TEXT PRIMARY KEY, enabled INTEGER NOT NULL);
                    PRAGMA user_version = 1;
                    INSERT INTO meta VALUES('format', 1), ('sequence', 7);
                    INSERT INTO models VALUES('m', 3, CAST('{"v":3}' AS BLOB));
                    INSERT INTO events VALUES(7, 'm', CAST('id: 7' AS BLOB));
                    """)
            }
            let (store, database) = try Self.open(directory)
            #expect(store.lastSequence == 7)
            #expect(try store.snapshot("m").revision == 3)
            #expect(try store.value(of: "m") == ["v": 3])
            #expect(database.recentCommits().isEmpty)
            #expect(try store.set(4, at: Path(dotted: "v"), in: "m").sequence == 8)
            try store.waitUntilDurable(through: 8)
            #expect(try Self.integer(database, "PRAGMA user_version") == 2)
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
