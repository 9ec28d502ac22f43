import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// A write to several models is one event id: on any stream, its events form one group that its last
/// event closes, whatever else the stream holds (location snapshots, a window moved meanwhile).
@Suite("Writes to several models on streams") struct WriteGroupTests {
    /// Every event a client holds without an id is followed by an `id:` line (a location's snapshot
    /// applies at once and may have none); ids strictly increase.
    static func expectGroupsClosed(_ events: [HubTestFixture.Event], _ comment: Comment? = nil) {
        var held = false
        var last: UInt64 = 0
        for event in events {
            if let id = event.id {
                #expect(id > last, "ids go back or repeat: \(events.map { ($0.type, $0.id as Any) })")
                (held, last) = (false, id)
            } else if !(event.type == "snapshot" && event.data["path"] != nil) && event.type != "stream" {
                held = true
            }
        }
        #expect(!held, "events left without an id line: \(events.map { ($0.type, $0.id as Any, $0.data["model"] as Any) })")
    }

    /// Found by review: a window moved while the stream still held a write's events (its client
    /// reading slowly) got a snapshot with the id of the write's first commit, queued between the
    /// write's events: the first took the id line and the last went without one, for good.
    @Test func aWindowMovedInsideAWriteLeavesItsGroupClosed() throws {
        let fixture = HubTestFixture()
        defer { fixture.stop() }
        try fixture.store.put("a", ["items": [1, 2, 3, 4, 5]])
        try fixture.store.put("b", ["x": 1])
        let id = try fixture.open(["a/items;first=2", "b/x"])
        _ = try fixture.read(id)
        let streamID = try #require(fixture.hub.state.withLock { $0.subscribers[id]?.streamID })
        let results = try fixture.store.write([
            Store.ModelEdits("a") { (editor: inout ModelEditor) throws(StoreError) in try editor.set(10, at: Path(["items", "0"])) },
            Store.ModelEdits("b") { (editor: inout ModelEditor) throws(StoreError) in try editor.set(2, at: Path(["x"])) }
        ])
        // The stream has not read the write's events yet when its window moves.
        #expect(fixture.caughtUp())
        try fixture.hub.moveWindow(stream: streamID, location: "a/items", to: Window(anchor: .start(offset: 1), limit: 2)) { _ in }
        let events = try fixture.read(id)
        Self.expectGroupsClosed(events)
        #expect(events.compactMap(\.id) == [results[1].sequence])
        #expect(events.map(\.type) == ["replace", "set", "snapshot"])
    }

    /// A stream of both models, one of a location in one of them, one of the other whole: each gets the
    /// write as one group with its id.
    @Test func everyKindOfStreamGetsTheWriteAsOneGroup() throws {
        let fixture = HubTestFixture()
        defer { fixture.stop() }
        try fixture.store.put("a", ["items": [1, 2, 3]])
        try fixture.store.put("b", ["x": 1])
        try fixture.store.put("c", ["y": 1])
        let streams = try [
            fixture.hub.subscribe(models: ModelFilter(names: ["a", "b"]), lastEventID: nil),
            fixture.open(["a/items", "b/x"]),
            fixture.open(["a/items;last=2"], models: ModelFilter(names: ["b"])),
            fixture.hub.subscribe(models: ModelFilter(names: ["b"]), lastEventID: nil)
        ]
        for id in streams { _ = try fixture.read(id) }
        let results = try fixture.store.write([
            Store.ModelEdits("a") { (editor: inout ModelEditor) throws(StoreError) in _ = try editor.append(4, to: Path(["items"])) },
            Store.ModelEdits("c") { _ in },  // unchanged
            Store.ModelEdits("b") { (editor: inout ModelEditor) throws(StoreError) in try editor.set(2, at: Path(["x"])) }
        ])
        #expect(Set(results.map(\.sequence)).count == 1)
        for id in streams {
            let events = try fixture.read(id)
            Self.expectGroupsClosed(events)
            #expect(events.compactMap(\.id) == [results[0].sequence], "stream \(id)")
        }
    }
}

/// `ViewJournal`: what the views arranged from a mirror catch up with.
@Suite("View journal") struct ViewJournalTests {
    static func commit(_ sequence: UInt64) -> Commit {
        Commit(sequence: sequence, model: "m", revision: sequence, kind: .changes([]))
    }

    @Test func keepsWhatTheOldestViewStillBeingArrangedNeeds() {
        var journal = ViewJournal()
        journal.record(Self.commit(1), bytes: 10)  // nobody arranging: not kept
        journal.start(at: 1)
        for sequence: UInt64 in 2...5 { journal.record(Self.commit(sequence), bytes: 10) }
        journal.start(at: 5)
        for sequence: UInt64 in 6...7 { journal.record(Self.commit(sequence), bytes: 10) }
        #expect(journal.commits(after: 1)?.map(\.sequence) == [2, 3, 4, 5, 6, 7])
        #expect(journal.commits(after: 5)?.map(\.sequence) == [6, 7])
        journal.finish(from: 1)
        #expect(journal.commits(after: 1) == nil)  // no longer kept for anyone
        #expect(journal.commits(after: 5)?.map(\.sequence) == [6, 7])
        journal.finish(from: 5)
        #expect(!journal.isActive)
    }

    /// Past its bounds it starts again: the views begun before are arranged again, those begun after
    /// catch up, and arrangements that keep overlapping never leave it overflowed for good.
    @Test func overflowingLosesOnlyTheViewsBegunBefore() {
        var journal = ViewJournal()
        journal.start(at: 0)
        for sequence in 1...UInt64(ViewJournal.limit + 1) { journal.record(Self.commit(sequence), bytes: 1) }
        #expect(journal.commits(after: 0) == nil)
        let after = UInt64(ViewJournal.limit + 1)
        journal.start(at: after)
        journal.record(Self.commit(after + 1), bytes: 1)
        journal.finish(from: 0)
        #expect(journal.commits(after: after)?.map(\.sequence) == [after + 1])
        journal.record(Self.commit(after + 2), bytes: ViewJournal.byteLimit)  // too many bytes
        #expect(journal.commits(after: after) == nil)
    }
}
