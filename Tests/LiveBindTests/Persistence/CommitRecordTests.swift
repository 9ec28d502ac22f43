import OrderedCollections
import DequeModule
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Commit records") struct CommitRecordTests {
    /// Changes of every kind, with the fields that need escaping or nesting. Made at each use, not kept
    /// in a global: LeakSanitizer cannot see the pointers in a global `JSON` enum's payload (they carry
    /// the enum's tag bits) and reports what they hold as leaked.
    static var changes: [Change] {
        [
            Change(
                kind: .set, path: Path(["a", "quote\"back\\slash", "new\nline", "ü🙂"]),
                value: .object(["x": .array([.int(-1), .double(0.5), .null, .bool(true), .string("\u{1}")])])),
            Change(kind: .set, path: Path([]), value: .object([:])),
            Change(kind: .insert, path: Path(["list"]), value: .string("v"), index: 0, key: .string("id-1")),
            Change(kind: .remove, path: Path(["list"]), index: 12, key: .int(7)),
            Change(kind: .replace, path: Path(["list"]), value: .int(Int.min), index: 3),
            Change(kind: .move, path: Path(["list"]), from: 9, to: Int.max),
            Change(kind: .remove, path: Path(["gone"]))
        ]
    }

    /// The record a log stores is written straight into a buffer: it must stay the text of the
    /// record's JSON shape that existing data directories hold, and read back as the same commit.
    @Test func aRecordIsTheTextOfItsJSONShapeAndReadsBackAsTheSameCommit() throws {
        let changes = Self.changes
        let commit = Commit(sequence: 41, model: "m", revision: 3, kind: .changes(changes))
        let shape = JSON.object(["changes": .array(Deque(changes.map(\.record)))])
        let record = commit.encodedRecord()
        #expect(record == shape.encoded())
        let read = try Commit(record: record, sequence: 41, model: "m", revision: 3)
        guard case .changes(let readChanges) = read.kind else { Issue.record("read back as \(read.kind)"); return }
        #expect(readChanges == changes)
    }

    @Test func aCommitOfAWriteToSeveralModelsKeepsHowManyFollowIt() throws {
        var commit = Commit(sequence: 41, model: "m", revision: 3, kind: .changes(Self.changes))
        commit.unitTail = 2
        let shape = JSON.object(["changes": .array(Deque(Self.changes.map(\.record))), "unitTail": .int(2)])
        #expect(commit.encodedRecord() == shape.encoded())
        let read = try Commit(record: commit.encodedRecord(), sequence: 41, model: "m", revision: 3)
        #expect(read.unitTail == 2 && read.eventID == 43)
        for bad in [#"{"drop":true,"unitTail":0}"#, #"{"drop":true,"unitTail":-1}"#, #"{"drop":true,"unitTail":"2"}"#] {
            #expect(throws: CommitRecordError.self) { try Commit(record: Array(bad.utf8), sequence: 1, model: "m", revision: 1) }
        }
    }

    @Test func snapshotAndDropRecordsKeepTheirText() throws {
        let value = JSON.object(["n": .int(1), "s": .string("a\"b")])
        let snapshot = Commit(sequence: 1, model: "m", revision: 1, kind: .snapshot(value))
        #expect(snapshot.encodedRecord() == JSON.object(["snapshot": value]).encoded())
        let drop = Commit(sequence: 2, model: "m", revision: 0, kind: .drop)
        #expect(drop.encodedRecord() == Array(#"{"drop":true}"#.utf8))
    }
}

extension Change {
    /// The change's record element as JSON values: the shape existing data directories hold, built
    /// the plain way, to compare the written bytes with.
    fileprivate var record: JSON {
        var members: OrderedDictionary<String, JSON> = [
            "op": .string(kind.rawValue),
            "path": .array(Deque(path.components.map(JSON.string)))
        ]
        if let value { members["value"] = value }
        if let index { members["index"] = .int(index) }
        if let from { members["from"] = .int(from) }
        if let to { members["to"] = .int(to) }
        if let key { members["key"] = key }
        return .object(members)
    }
}
