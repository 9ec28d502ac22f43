import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// `--max-view-rows` holds as arrays grow, not only when a view is made.
@Suite("View rows") struct ViewRowsTests {
    /// Views made on small arrays, whose arrays then grow past the limit: the largest view goes and its
    /// stream ends; a client that asks for it again gets 503 naming the setting; a smaller view stays.
    @Test func viewsWhoseArraysGrowPastTheLimitEndTheirStreams() throws {
        let store = Store()
        try store.put("big", ["items": [1, 2, 3]])
        try store.put("small", ["items": [1, 2, 3]])
        try withRunningServer(store: store, configure: { $0.streams.maxViewRows = 100 }) { port in
            // The same view of another model on the same stream: it must stay counted while it is shown.
            let grows = try TestEventStream(port: port, target: "/events?sub=big/items;order=.;limit=5&sub=small/items;order=.;limit=5")
            let stays = try TestEventStream(port: port, target: "/events?sub=small/items;order=.;limit=5")
            _ = try grows.next(3)
            _ = try stays.next(2)
            let rows = JSON.array(.init((0..<120).map { JSON.int($0) }))
            try store.set(rows, at: Path(pointer: "/items"), in: "big")
            try store.append(4, to: Path(pointer: "/items"), in: "small")
            // The grown view's stream ends (possibly after the event of the write that grew it).
            var ended = false
            for _ in 0..<5 where !ended { ended = try grows.next() == nil }
            #expect(ended, "the stream of a view past --max-view-rows did not end")
            #expect(try stays.next()?.type == "insert", "the view within the limit stopped")
            let again = try TestHTTPClient.send(port: port, "GET", "/events?sub=big/items;order=.;limit=5", "")
            #expect(again.status == 503 && again.text.contains("max-view-rows"), "\(again.status) \(again.text)")
            // The ended stream showed the same view of `small`: it stays for the stream still showing it.
            try store.append(5, to: Path(pointer: "/items"), in: "small")
            #expect(try stays.next()?.type == "insert", "the view of small stopped")
        }
    }
}
