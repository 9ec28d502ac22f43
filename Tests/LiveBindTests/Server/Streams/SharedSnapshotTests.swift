import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// Streams that start at the same cut share one encoded snapshot frame.
@Suite("Shared snapshot frames") struct SharedSnapshotTests {
    static let holderCount = 20
    /// Far more than a socket's buffers, so a stream that does not read keeps holding its snapshot.
    static let text = String(repeating: "s", count: 256 * 1024)

    @Test func streamsStartingAtTheSameCutShareOneSnapshotFrame() throws {
        let store = Store()
        try store.put("m", ["text": .string(Self.text), "n": 0])
        let cut = store.lastSequence
        try withRunningServer(store: store) { port in
            let holders = try (0..<Self.holderCount).map { _ in
                try TestEventStream(port: port, target: "/events?model=m", receiveBufferSize: 2048)
            }
            #expect(holders.allSatisfy { $0.status == 200 })
            var metrics = try readMetrics(port: port)
            #expect(metrics["livebind_snapshots_encoded_total"] == 1)
            #expect(metrics["livebind_snapshots_shared_total"] == Self.holderCount - 1)

            // A stream with other models gets its own frame.
            let other = try TestEventStream(port: port, target: "/events")
            #expect(try other.next()?.id == "\(cut)")
            metrics = try readMetrics(port: port)
            #expect(metrics["livebind_snapshots_encoded_total"] == 2)

            // After a small write, a new stream still starts from the shared frame, then gets that
            // write as an event, once: the same state as a fresh snapshot, for a fraction of the memory.
            try store.set(1, at: Path(pointer: "/n"), in: "m")
            let reader = try TestEventStream(port: port, target: "/events?model=m")
            let snapshot = try #require(try reader.next())
            #expect(snapshot.type == "snapshot" && snapshot.id == "\(cut)")
            let set = try #require(try reader.next())
            #expect(set.type == "set" && set.id == "\(cut + 1)")
            #expect(try set.object()["value"] as? Int == 1)
            metrics = try readMetrics(port: port)
            #expect(metrics["livebind_snapshots_encoded_total"] == 2)
            #expect(metrics["livebind_snapshots_shared_total"] == Self.holderCount)

            // Once more bytes of events were published than the frame holds, a new stream gets a fresh cut.
            let published = try #require(try readMetrics(port: port)["livebind_events_published_total"])
            try store.set(.string(Self.text + "!"), at: Path(pointer: "/text"), in: "m")
            try waitForMetric(port: port, "livebind_events_published_total", atLeast: published + 1)
            let late = try TestEventStream(port: port, target: "/events?model=m")
            let fresh = try #require(try late.next())
            #expect(fresh.type == "snapshot" && fresh.id == "\(cut + 2)")
            metrics = try readMetrics(port: port)
            #expect(metrics["livebind_snapshots_encoded_total"] == 3)
            withExtendedLifetime(holders) {}
        }
    }

    /// Issue 26: streams asking for a big model plus a different unknown name each got a frame of their
    /// own (60 streams that never read held 497 MB of copies of an 8 MB model). The frame is keyed by
    /// what it holds, so they share one.
    @Test func unknownModelNamesDoNotDefeatSharing() throws {
        let store = Store()
        try store.put("big", ["text": .string(Self.text)])
        let cut = store.lastSequence
        try withRunningServer(store: store) { port in
            let holders = try (0..<Self.holderCount).map { index in
                try TestEventStream(port: port, target: "/events?model=big&model=junk\(index)", receiveBufferSize: 2048)
            }
            #expect(holders.allSatisfy { $0.status == 200 })
            let metrics = try readMetrics(port: port)
            #expect(metrics["livebind_snapshots_encoded_total"] == 1)
            #expect(metrics["livebind_snapshots_shared_total"] == Self.holderCount - 1)
            #expect(try #require(metrics["livebind_stream_unsent_bytes"]) < 2 * Self.text.utf8.count)
            // The names still count for what follows: a model made later under one of them reaches its stream.
            try store.put("junk3", ["made": true])
            let reader = try TestEventStream(port: port, target: "/events?model=big&model=junk3")
            #expect(try reader.next(2).map(\.ownID) == [nil, "\(cut + 1)"])
            let first = holders[3]
            let snapshot = try #require(try first.next())
            #expect(snapshot.type == "snapshot" && snapshot.ownID == "\(cut)")
            let made = try #require(try first.next())
            #expect(made.type == "snapshot" && made.data.contains("junk3") && made.ownID == "\(cut + 1)")
            withExtendedLifetime(holders) {}
        }
    }

    /// A frame nobody holds any more is not kept: the next stream after a write starts from a fresh
    /// cut, though the write is much smaller than the frame.
    @Test func aSnapshotEveryStreamHasSentIsNotReused() throws {
        let store = Store()
        try store.put("m", ["n": 0, "pad": .string(String(repeating: "p", count: 1000))])
        try withRunningServer(store: store) { port in
            let first = try TestEventStream(port: port, target: "/events?model=m")
            #expect(try first.next()?.id == "1")
            try store.set(1, at: Path(pointer: "/n"), in: "m")
            #expect(try first.next()?.id == "2")
            let second = try TestEventStream(port: port, target: "/events?model=m")
            let snapshot = try #require(try second.next())
            #expect(snapshot.type == "snapshot" && snapshot.id == "2")
            #expect(try readMetrics(port: port)["livebind_snapshots_encoded_total"] == 2)
        }
    }
}
