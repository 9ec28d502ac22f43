import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// The index and manifest a cluster snapshot is stored as (the chunks themselves are exercised against
/// real NATS servers in Tests/cluster/test_sizes.py).
@Suite("Cluster snapshot index") struct SnapshotIndexTests {
    @Test func anIndexAndAManifestReadBackAsWritten() throws {
        let index = SnapshotIndex(
            segments: [
                .init(chunks: [7, 8], bytes: 30, models: [("a", 3, 0, 10), ("b", 1, 10, 20)]),
                .init(chunks: [12], bytes: 5, models: [("c", 9, 0, 5)])
            ],
            bindings: [("copy", ["source": "a.x", "target": "b.x"], false)], retired: [2, 3])
        let read = try SnapshotIndex(bytes: index.encoded())
        #expect(read.chunks == [7, 8, 12] && read.retired == [2, 3])
        #expect(read.segments.map(\.bytes) == [30, 5])
        #expect(read.segments[0].models.map(\.name) == ["a", "b"] && read.segments[0].models[1].offset == 10)
        #expect(read.bindings.first?.id == "copy" && read.bindings.first?.enabled == false)
        let manifest = SnapshotManifest(sequence: 4000, events: 9000, round: 20, bytes: 123, chunks: [13, 14])
        #expect(try SnapshotManifest(body: manifest.encoded()) == manifest)
        // A manifest of 0.1 has no event id: its event ids were the stream's sequences.
        let old = try SnapshotManifest(body: Array(#"{"sequence":40,"round":2,"bytes":3,"chunks":[5]}"#.utf8))
        #expect(old.events == 40)
    }

    @Test func anIndexPointingPastItsSegmentIsRefused() {
        let index = SnapshotIndex(segments: [.init(chunks: [1], bytes: 10, models: [("a", 1, 5, 6)])], bindings: [], retired: [])
        #expect(throws: ClusterError.self) { try SnapshotIndex(bytes: index.encoded()) }
        #expect(throws: ClusterError.self) { try SnapshotManifest(body: Array(#"{"sequence":1,"round":0,"bytes":3,"chunks":[0]}"#.utf8)) }
    }
}
