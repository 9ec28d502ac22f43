import Foundation
import Testing
@testable import LiveBind
@testable import LiveBindEngine

@Suite("History") struct HistoryTests {
    @Test func aRecordKeepsWhenAndWhoAndRefusesWhatIsNotThat() throws {
        var commit = Commit(sequence: 7, model: "m", revision: 2, kind: .drop)
        commit.time = 1_795_400_000_123
        commit.origin = CommitOrigin(actor: "token:ci \"q\"", route: "PUT /models/m")
        let read = try Commit(record: commit.encodedRecord(), sequence: 7, model: "m", revision: 2)
        #expect(read.time == commit.time && read.origin == commit.origin)
        for bad in [#"{"drop":true,"at":0}"#, #"{"drop":true,"at":"1"}"#, #"{"drop":true,"by":"x"}"#] {
            #expect(throws: CommitRecordError.self) { try Commit(record: Array(bad.utf8), sequence: 1, model: "m", revision: 1) }
        }
    }

    @Test func retentionIsAnAgeASizeOrBoth() {
        #expect(HistoryRetention(parsing: "0") == .off)
        #expect(HistoryRetention(parsing: "7d") == HistoryRetention(age: 7 * 86_400_000, bytes: nil))
        #expect(HistoryRetention(parsing: "10GB") == HistoryRetention(age: nil, bytes: 10_000_000_000))
        #expect(HistoryRetention(parsing: "12h,1GiB") == HistoryRetention(age: 12 * 3_600_000, bytes: 1 << 30))
        for bad in ["", "7", "7d,8d", "1GB,2GB", "-1d", "7d,", "0d", "1x", "99999999999999999999d", "7 d"] {
            #expect(HistoryRetention(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test func timesAreRFC3339InUTCAndReadBack() {
        #expect(HistoryTime.text(0) == "1970-01-01T00:00:00.000Z")
        #expect(HistoryTime.text(951_782_400_000) == "2000-02-29T00:00:00.000Z")
        #expect(HistoryTime.text(-1) == "1969-12-31T23:59:59.999Z")
        var random = SplitMix(seed: 30)
        for _ in 0..<500 {
            // Read back by Foundation's parser, an implementation of its own.
            let time = Int64(random.next() % 4_000_000_000_000)
            #expect(HistoryTime.parse(HistoryTime.text(time)) == time, "\(time): \(HistoryTime.text(time))")
            var writer = HistoryTime.Writer(), bytes: [UInt8] = []
            writer.append(time, to: &bytes)
            writer.append(time + 1, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == HistoryTime.text(time) + HistoryTime.text(time + 1))
        }
        #expect(HistoryTime.parse("2026-11-26T10:00:00+01:00") != nil)
        #expect(HistoryTime.parse("2026-11-26T10:00:00+01:00") == HistoryTime.parse("2026-11-26T09:00:00Z"))
        #expect(HistoryTime.parse("2026-11-26T09:00:00.5Z") == HistoryTime.parse("2026-11-26T09:00:00Z").map { $0 + 500 })
        #expect(HistoryTime.parse("yesterday") == nil && HistoryTime.parse(String(repeating: "9", count: 50)) == nil)
    }

    @Test func oneProcessHasAHistoryFileAtATime() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("livebind-history-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var first: HistoryDatabase? = try HistoryDatabase(
            directory: directory, retention: .init(age: 1000, bytes: nil),
            checkpointBytes: 1000)
        #expect(throws: StateDatabaseError.self) {
            _ = try HistoryDatabase(directory: directory, retention: .init(age: 1000, bytes: nil), checkpointBytes: 1000)
        }
        #expect(first != nil)
        first = nil
        _ = try HistoryDatabase(directory: directory, retention: .init(age: 1000, bytes: nil), checkpointBytes: 1000)
    }

    /// Random writes of every kind to a store recorded by a history with tiny checkpoints: every
    /// document as it was, and every location's series, read back as the writes made them.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64]) func theHistoryAnswersWhatTheWritesMade(seed: UInt64) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("livebind-history-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let history = try HistoryDatabase(
            directory: directory, retention: HistoryRetention(age: nil, bytes: 1 << 40),
            checkpointBytes: 300)
        let store = Store(startingSequence: 100)
        let recording = store.observeDurable { history.enqueue($0) }
        defer { recording.cancel(); history.stop() }
        try store.put("m", ["t": 0, "obj": ["a": 1], "items": []])
        _ = history.start(with: store, recent: [])
        var states: [(UInt64, JSON?)] = [(store.lastSequence, store.snapshot(models: ["m"]).models.first?.value)]
        var random = SplitMix(seed: seed)
        func number() -> JSON { Int(random.next() % 3) == 0 ? .double(Double(random.next() % 100) / 4) : .int(Int(random.next() % 9) - 4) }
        for _ in 0..<120 {
            let document = states.last!.1
            let items = document?["items"]?.arrayValue?.count ?? 0
            var result: WriteResult?
            switch random.next() % 9 {
            case 0, 1: result = try? store.set(number(), at: Path(["t"]), in: "m")
            case 2: result = try? store.set(number(), at: Path(["obj", "a"]), in: "m")
            case 3: result = try? store.remove(at: Path(["obj", "a"]), in: "m")
            case 4: result = try? store.insert(["p": number()], at: Int(random.next() % UInt64(items + 1)), in: Path(["items"]), of: "m")
            case 5 where items > 0: result = try? store.remove(at: Path(["items", String(random.next() % UInt64(items))]), in: "m")
            case 6 where items > 1:
                result = try? store.move(
                    from: Int(random.next() % UInt64(items)), to: Int(random.next() % UInt64(items)),
                    in: Path(["items"]), of: "m")
            case 7: result = try? store.put("m", ["t": number(), "obj": [:], "items": [["p": 1], ["p": 2]]]).result
            case 8 where document != nil: result = try? store.drop("m")
            default: result = try? store.put("m", ["t": 1, "obj": ["a": 2], "items": []]).result
            }
            guard let result, result.changed else { continue }
            states.append((result.sequence, store.snapshot(models: ["m"]).models.first?.value))
            // A checkpoint is taken at most once a batch: let some batches be small.
            if random.next() % 2 == 0 { history.flush() }
        }
        history.flush()
        #expect(
            history.checkpointsWritten.load(ordering: .relaxed) > 3,
            "\(history.commitsWritten.load(ordering: .relaxed)) commits, \(states.count) states")
        for (sequence, document) in states {
            let read = try history.document("m", at: sequence)
            #expect(read?.value == document, "document at \(sequence) (seed \(seed))")
        }
        let (first, last) = (states[0].0, states.last!.0)
        for pointer in ["", "/t", "/obj", "/obj/a", "/items", "/items/0/p", "/items/1", "/items/2/p"] {
            let path = try Path(pointer: pointer)
            func value(_ document: JSON?) -> JSON? { try? document?.value(at: path) }
            var expected: [HistorySeries.Point] = []
            var current = value(states[0].1)
            for (sequence, document) in states.dropFirst() where value(document) != current {
                current = value(document)
                expected.append(HistorySeries.Point(sequence: sequence, time: 0, value: current))
            }
            let series = try history.series("m", path, from: first, to: last, limits: .init(), origins: false)
            #expect(series.start == value(states[0].1), "start of \(pointer) (seed \(seed))")
            #expect(
                series.points.map { [$0.sequence: $0.value] } == expected.map { [$0.sequence: $0.value] },
                "series of \(pointer) (seed \(seed))")
        }
    }
}
