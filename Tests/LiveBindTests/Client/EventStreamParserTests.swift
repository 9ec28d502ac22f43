import Testing
@testable import LiveBindClient
@testable import LiveBindEngine

@Suite("The client's event stream parser")
struct EventStreamParserTests {
    static let stream =
        "retry: 2000\n\n: heartbeat\n\nevent: stream\ndata: {\"stream\":\"abc\"}\n\n"
        + "event: snapshot\ndata: {\"a\":1}\n\nid: 7\nevent: set\ndata: line one\ndata: line two\n\n"
        + "data:no space\nid: 8\n\n"

    static let expected = [
        ServerSentEvent(id: nil, name: "stream", data: "{\"stream\":\"abc\"}"),
        ServerSentEvent(id: nil, name: "snapshot", data: "{\"a\":1}"),
        ServerSentEvent(id: "7", name: "set", data: "line one\nline two"),
        ServerSentEvent(id: "8", name: "message", data: "no space")
    ]

    /// Whatever the chunks and line ends (LF, CRLF, CR), the same events come out: a seeded search
    /// over 2,000 ways of cutting the stream.
    @Test func chunksCutAnywhereAndAnyLineEndGiveTheSameEvents() throws {
        var random = SplitMix(seed: 31)
        for round in 0..<2000 {
            let ending = ["\n", "\r\n", "\r"][round % 3]
            var bytes = Array(Self.stream.replacingOccurrences(of: "\n", with: ending).utf8)
            if round % 7 == 0 { bytes = [0xEF, 0xBB, 0xBF] + bytes }
            var parser = EventStreamParser()
            var events: [ServerSentEvent] = []
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + Int(random.next() % 9))
                events += try parser.feed(bytes[start..<end])
                start = end
            }
            #expect(events == Self.expected, "round \(round)")
        }
    }

    @Test func aLineLongerThanTheLimitEndsTheStream() {
        var parser = EventStreamParser(maxLineBytes: 16)
        #expect(throws: EventStreamParser.Failure.lineTooLong(16)) {
            _ = try parser.feed(Array(("data: " + String(repeating: "x", count: 40)).utf8))
        }
    }

    /// Short data lines without the empty line that ends an event cannot make one event grow past
    /// the limit either.
    @Test func anEventLongerThanTheLimitEndsTheStream() throws {
        var parser = EventStreamParser(maxLineBytes: 64)
        #expect(try parser.feed(Array("data: 12345\ndata: 12345\n\n".utf8)).count == 1)
        #expect(throws: EventStreamParser.Failure.lineTooLong(64)) {
            _ = try parser.feed(Array(String(repeating: "data: 12345\n", count: 20).utf8))
        }
    }
}
