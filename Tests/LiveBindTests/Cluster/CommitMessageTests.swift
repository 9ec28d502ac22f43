import Testing
@testable import LiveBind
@testable import LiveBindEngine

/// One message of the cluster's stream carrying a turn's commits (`CommitMessage`); the stream itself
/// is exercised against real NATS servers in Tests/cluster.
@Suite("Cluster commit messages") struct CommitMessageTests {
    // Made on each use: a static stored value of the test type is reported by LeakSanitizer.
    static var commits: [Commit] {
        [
            Commit(sequence: 41, model: "sensor", revision: 7, kind: .changes([Change(kind: .set, path: Path(["t"]), value: 21.5)])),
            Commit(sequence: 42, model: "a b\nc", revision: 1, kind: .snapshot(["x": [1, 2]])),
            Commit(sequence: 43, model: "gone", revision: 3, kind: .drop)
        ]
    }

    static func message(_ body: [UInt8], headers: [String: String] = [CommitMessage.sequenceHeader: "41"]) -> StreamMessage {
        StreamMessage(sequence: 9, pending: 0, subject: "lb.commits", headers: headers, body: body)
    }

    @Test func commitsReadBackInOrderWithTheirEventIDs() throws {
        let body = CommitMessage.body(Self.commits, records: Self.commits.map { $0.encodedRecord() })
        let read = try CommitMessage.commits(in: Self.message(body))
        #expect(read.map(\.sequence) == [41, 42, 43])
        #expect(read.map(\.model) == ["sensor", "a b\nc", "gone"])
        #expect(read.map(\.revision) == [7, 1, 3])
        #expect(read.map { $0.encodedRecord() } == Self.commits.map { $0.encodedRecord() })
    }

    @Test func aCommitsTagTravelsWithIt() throws {
        var tagged = Self.commits
        tagged[1].tag = "an idempotency receipt's tag"
        let read = try CommitMessage.commits(in: Self.message(CommitMessage.body(tagged, records: tagged.map { $0.encodedRecord() })))
        #expect(read.map(\.tag) == [nil, "an idempotency receipt's tag", nil])
    }

    @Test func aMessageOfVersion01IsOneCommitAtItsStreamSequence() throws {
        let headers = [CommitMessage.modelHeader: "sensor", CommitMessage.revisionHeader: "7"]
        let read = try CommitMessage.commits(in: Self.message(Self.commits[0].encodedRecord(), headers: headers))
        #expect(read.map(\.sequence) == [9] && read.first?.revision == 7)
    }

    @Test func bodiesThatAreNotCommitsAreRefused() {
        for body in [
            "", "c 1 1 2\nab", "c 1 99 2\nab{}", "x 1 1 2\na{}", "c 1 1 18446744073709551616\na{}", "c -1 1 2\na{}",
            "c 1 1 2\na{}c 1", "c 1 1 2 3\na{}"
        ] {
            #expect(throws: CommitRecordError.self, "\(body)") { try CommitMessage.commits(in: Self.message(Array(body.utf8))) }
        }
        #expect(throws: CommitRecordError.self) {
            try CommitMessage.commits(in: Self.message(Array("c 1 1 2\na{}".utf8), headers: [CommitMessage.sequenceHeader: "0"]))
        }
        // Sequences that would run past the largest event id: refused (the node diverges), not a crash.
        let record = Self.commits[2].encodedRecord()
        let body = Array("c 1 1 \(record.count)\na".utf8) + record
        #expect(throws: CommitRecordError.self) {
            try CommitMessage.commits(in: Self.message(body, headers: [CommitMessage.sequenceHeader: String(UInt64.max)]))
        }
        #expect(throws: Never.self) {
            try CommitMessage.commits(in: Self.message(body, headers: [CommitMessage.sequenceHeader: String(UInt64.max - 1)]))
        }
    }

    /// Seeded mutations of a valid body (bytes flipped, cut, repeated) are read or refused, never a crash.
    @Test func mutatedBodiesAreReadOrRefused() {
        let valid = CommitMessage.body(Self.commits, records: Self.commits.map { $0.encodedRecord() })
        var generator = SplitMix(seed: 0x5EED_C0DE)
        for _ in 0..<5_000 {
            var body = valid
            switch generator.next() % 3 {
            case 0: body[Int(generator.next() % UInt64(body.count))] = UInt8(truncatingIfNeeded: generator.next())
            case 1: body.removeLast(Int(generator.next() % UInt64(body.count)))
            default: body += body.prefix(Int(generator.next() % UInt64(body.count)))
            }
            _ = try? CommitMessage.commits(in: Self.message(body))
        }
    }
}
