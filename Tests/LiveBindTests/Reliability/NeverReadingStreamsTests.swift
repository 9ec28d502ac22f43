import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine
#if canImport(Glibc)
import Glibc
#endif

extension ReliabilityTests {
    @Suite("Never-reading streams on a large model") struct NeverReadingStreamsTests {
        static let streamCount = 2000
        /// The model: eight members of 512 KiB (each write under the default body limit).
        static let modelParts = 8
        static let partSize = 512 * 1024
        /// Events published while the streams hold on: several times `--retained-bytes`.
        static let eventCount = 2400
        /// Under a sanitizer each byte costs ten times the work (217 s of `make test-asan` went here): the
        /// same counts and ratios at a quarter of the bytes.
        static let scale = ProcessMemory(pid: getpid()).isSanitized ? 4 : 1
        static let eventSize = 128 * 1024 / scale
        static let retainedBytes = (64 << 20) / scale
        static let rssLimitMiB = 300

        /// 2,000 clients open a stream on a 4 MiB model and never read it; meanwhile 300 MiB of events (75
        /// under a sanitizer) flow to one client that reads them all, in order. The real server process's
        /// peak memory stays under 300 MiB: the never-reading streams share one snapshot frame (unshared
        /// they would hold 8 GB), and the retained events are bounded in bytes (by count, 4,096 of these
        /// events would be 512 MiB). The streams stay open throughout: it is the sharing, not a cut, that bounds it.
        @Test func neverReadingStreamsOnAFourMebibyteModelKeepTheServerUnder300MiBWhileAReaderGetsEveryEvent() throws {
            let wanted = Self.streamCount + 1024
            let limit = raiseFileLimit(to: wanted)
            try #require(limit >= wanted, "\(Self.streamCount) streams need \(wanted) open files here; the limit is \(limit)")
            let server = try ServerProcess([
                "--no-demo", "--connection-timeout", "600",
                "--stream-buffer-limit", "\(64 << 20)",
                "--retained-bytes", "\(Self.retainedBytes)"
            ])
            defer { if (try? server.terminate()) == nil { try? server.kill() } }
            let port = try server.waitForPort(timeout: 30)
            let pid = server.process.processIdentifier

            #expect(try TestHTTPClient.send(port: port, "PUT", "/models/big", #"{"v":""}"#).status == 201)
            let part = String(repeating: "m", count: Self.partSize)
            for index in 0..<Self.modelParts {
                #expect(try TestHTTPClient.send(port: port, "PUT", "/models/big/p\(index)", "\"\(part)\"").status == 200)
            }
            let stalled = try (0..<Self.streamCount).map { _ in
                try TestEventStream(port: port, target: "/events?model=big", timeout: 30, receiveBufferSize: 2048)
            }
            #expect(stalled.allSatisfy { $0.status == 200 })
            let afterConnect = ProcessMemory(pid: pid)

            let reader = ThreadBox(try TestEventStream(port: port, target: "/events?model=big", timeout: 60))
            let snapshot = try #require(try reader.value.next())
            #expect(snapshot.type == "snapshot")
            #expect(snapshot.data.utf8.count > Self.modelParts * Self.partSize)
            let firstID = try #require(snapshot.id.flatMap { UInt64($0) }) + 1
            let received = SharedCount()
            let readerThread = TestThread {
                var expected = firstID
                while received.value < Self.eventCount {
                    guard let event = try reader.value.next() else { throw TestSocketError(description: "reader's stream ended") }
                    guard event.type == "set", event.id == "\(expected)" else {
                        throw TestSocketError(description: "reader expected set #\(expected), got \(event.type)#\(event.id ?? "-")")
                    }
                    guard event.data.contains(#""value":"\#(received.value):"#) else {
                        throw TestSocketError(description: "event \(received.value) out of order")
                    }
                    expected += 1
                    received.add()
                }
            }
            let filler = String(repeating: "e", count: Self.eventSize)
            let retainedEvents = Self.retainedBytes / Self.eventSize
            for index in 0..<Self.eventCount {
                #expect(try TestHTTPClient.send(port: port, "PUT", "/models/big/v", "\"\(index):\(filler)\"").status == 200)
                // Keep the reader within the retained events: it must see every event.
                if index % 32 == 31 {
                    let caughtUp = waitUntil(seconds: 60) { received.value >= index + 1 - retainedEvents / 2 }
                    try #require(caughtUp, "reader stuck at \(received.value) of \(index + 1)")
                }
            }
            try readerThread.join(seconds: 120)
            let atEnd = ProcessMemory(pid: pid)
            try #require(atEnd.peakKB > 0, "could not read /proc/\(pid)/status")
            let metrics = try readMetrics(port: port)
            #expect(received.value == Self.eventCount)
            #expect(metrics["livebind_open_streams"] == Self.streamCount + 1, "the never-reading streams were closed: \(metrics)")
            #expect(metrics["livebind_snapshots_encoded_total", default: .max] <= 2)
            #expect(metrics["livebind_retained_bytes", default: .max] <= Self.retainedBytes)
            // The 300 MiB bound is a plain build's; under a sanitizer the server also carries shadow memory
            // and ASan's quarantine of freed blocks (493 MiB peak was seen under ASan), see `MemoryBound`.
            let bound = MemoryBound(mebibytes: Self.rssLimitMiB).kilobytes(sanitized: atEnd.isSanitized)
            #expect(atEnd.peakKB < bound, "server peak RSS \(atEnd.peakKB >> 10) MiB")
            print(
                "Never-reading streams: \(Self.streamCount) streams held a \(snapshot.data.utf8.count >> 20) MiB snapshot; "
                    + "\(received.value) events (\((Self.eventCount * Self.eventSize) >> 20) MiB) reached the reader in order; "
                    + "server RSS \(afterConnect.residentKB >> 10) MiB after the streams connected, \(atEnd.residentKB >> 10) MiB at the end, "
                    + "peak \(atEnd.peakKB >> 10) MiB; \(metrics["livebind_snapshots_encoded_total", default: -1]) snapshot frames encoded, "
                    + "retained \(metrics["livebind_retained_bytes", default: 0] >> 20) MiB")
            withExtendedLifetime(stalled) {}
        }
    }
}
