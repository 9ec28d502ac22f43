import DequeModule
import Foundation
import Synchronization
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Array windows") struct WindowSubscriptionTests {
    static func rows(_ count: Int) -> JSON {
        .array(Deque((0..<count).map { JSON.object(["id": .string("r\($0)"), "v": .int($0)]) }))
    }

    @Test func lastWindowSlidesOnAppendAsRemoveAndInsert() throws {
        let store = Store()
        try store.put("m", ["items": [1, 2, 3, 4, 5]])
        try withRunningServer(store: store) { port in
            let stream = try TestEventStream(port: port, target: "/events?sub=m/items;last=2")
            let snapshot = try stream.next(2)[1].object()
            #expect(snapshot["value"] as? [Int] == [4, 5])
            #expect(snapshot["window"] as? [String: Int] == ["offset": 3, "length": 5])
            try store.append(6, to: Path(pointer: "/items"), in: "m")
            let slide = try #require(try stream.next())
            #expect(slide.type == "batch" && slide.id == "2")
            let body = try slide.object()
            let changes = try #require(body["changes"] as? [[String: Any]])
            #expect(changes.map { $0["kind"] as? String } == ["remove", "insert"])
            #expect(changes.map { $0["index"] as? Int } == [0, 1])
            #expect(changes[1]["value"] as? Int == 6)
            #expect(body["window"] as? [String: Int] == ["offset": 4, "length": 6])
        }
    }

    @Test func changeOutsideAFirstWindowSendsOnlyItsLength() throws {
        let store = Store()
        try store.put("m", ["items": Self.rows(5)])
        try withRunningServer(store: store) { port in
            let stream = try TestEventStream(port: port, target: "/events?sub=m/items;first=2")
            _ = try stream.next(2)
            try store.append(["id": "r5", "v": 5], to: Path(pointer: "/items"), in: "m")
            try store.set(40, at: Path(pointer: "/items/4/v"), in: "m")  // outside: nothing
            try store.set(10, at: Path(pointer: "/items/1/v"), in: "m")  // the window's row 1
            let events = try stream.next(2)
            #expect(events.map(\.type) == ["length", "set"])
            let length = try events[0].object()
            #expect(length["length"] as? Int == 6 && length["path"] as? String == "/items")
            #expect(length["window"] as? [String: Int] == ["offset": 0, "length": 6])
            let set = try events[1].object()
            #expect(set["path"] as? String == "/items/1/v" && set["value"] as? Int == 10 && events[1].id == "4")
        }
    }

    @Test func offsetWindowRowsAreSentWithIndexesInTheWindow() throws {
        let store = Store()
        try store.put("m", ["items": Self.rows(10)])
        try withRunningServer(store: store) { port in
            let stream = try TestEventStream(port: port, target: "/events?sub=m/items;offset=4;limit=3")
            let snapshot = try stream.next(2)[1].object()
            #expect((snapshot["value"] as? [[String: Any]])?.map { $0["v"] as? Int } == [4, 5, 6])
            try store.set(50, at: Path(pointer: "/items/5/v"), in: "m")
            let set = try #require(try stream.next()).object()
            #expect(set["path"] as? String == "/items/1/v")
            try store.remove(at: Path(pointer: "/items/0"), in: "m")  // before: the window shifts by one
            let shift = try #require(try stream.next()).object()
            let changes = try #require(shift["changes"] as? [[String: Any]])
            #expect(changes.map { $0["kind"] as? String } == ["remove", "insert"])
            #expect(changes.map { $0["index"] as? Int } == [0, 2])
            #expect((changes[1]["value"] as? [String: Any])?["v"] as? Int == 7)
            #expect(shift["window"] as? [String: Int] == ["offset": 4, "length": 9])
        }
    }

    /// Random writes of every kind inside, before, after and above windows of each anchor; the
    /// window each stream's events build must equal the server's slice at every checkpoint.
    @Test(arguments: ["first=7", "last=7", "offset=5;limit=6", "offset=30;limit=4", "last=1", "first=1"])
    func windowEventsRebuildTheServersSliceAfterRandomWrites(window: String) throws {
        let store = Store()
        try store.put("m", ["items": Self.rows(12), "mark": 0])
        try withRunningServer(store: store) { port in
            let stream = try TestEventStream(port: port, target: "/events?sub=m/items;\(window)&sub=m/mark")
            _ = try stream.next()
            var replica = try LocationReplica(model: "m", pointer: "/items")
            try replica.apply(try #require(try stream.next()))
            _ = try stream.next()
            var random = SplitMix(seed: 17)
            var nextID = 100
            let items = try Path(pointer: "/items")
            for round in 1...12 {
                for _ in 0..<40 { try Self.randomWrite(store, items, &random, &nextID) }
                try store.set(.int(round), at: Path(pointer: "/mark"), in: "m")
                for _ in 0..<400 {
                    let event = try #require(try stream.next())
                    if try event.object()["path"] as? String == "/mark" { break }
                    try replica.apply(event)
                }
                let all = try store.value(of: "m", at: items).arrayValue!
                let expected = Self.slice(all, window)
                #expect(replica.value == .array(Deque(all[expected])), "round \(round)")
                #expect(
                    replica.window?.offset == Self.offset(all, window) && replica.window?.length == all.count,
                    "round \(round)")
            }
            #expect(replica.ids == replica.ids.sorted() && Set(replica.ids).count == replica.ids.count)
        }
    }

    /// The `window.offset` a stream reports for `spec`: the first row's index; for `first`/`offset`
    /// windows the asked offset, even past the array's end.
    static func offset(_ all: Deque<JSON>, _ spec: String) -> Int {
        spec.hasPrefix("last")
            ? slice(all, spec).lowerBound
            : Int(spec.split(separator: ";").first { $0.hasPrefix("offset=") }?.dropFirst(7) ?? "0")!
    }

    /// The rows of `all` the window `spec` shows, computed independently of the server's code.
    static func slice(_ all: Deque<JSON>, _ spec: String) -> Range<Int> {
        var numbers: [String: Int] = [:]
        for part in spec.split(separator: ";") {
            let pair = part.split(separator: "=")
            numbers[String(pair[0])] = Int(pair[1])!
        }
        if let last = numbers["last"] { return max(0, all.count - last)..<all.count }
        let offset = numbers["offset"] ?? 0
        let limit = numbers["first"] ?? numbers["limit"]!
        return min(offset, all.count)..<min(all.count, offset + limit)
    }

    /// One random write to the array at `items`: insert, append, remove, replace, move, a member
    /// inside a row, the whole array, or a batch of two of them.
    static func randomWrite(_ store: Store, _ items: Path, _ random: inout SplitMix, _ nextID: inout Int) throws {
        let count = try store.value(of: "m", at: items).arrayValue!.count
        func row() -> JSON {
            nextID += 1
            return .object(["id": .string("r\(nextID)"), "v": .int(nextID)])
        }
        let choice = Int.random(in: 0..<20, using: &random)
        switch choice {
        case 0..<4: try store.insert(row(), at: Int.random(in: 0...count, using: &random), in: items, of: "m")
        case 4..<7: try store.append(row(), to: items, in: "m")
        case 7..<11 where count > 0:
            try store.remove(at: items.appending(index: Int.random(in: 0..<count, using: &random)), in: "m")
        case 11..<13 where count > 0:
            try store.replace(at: Int.random(in: 0..<count, using: &random), in: items, of: "m", with: row())
        case 13..<16 where count > 1:
            try store.move(
                from: Int.random(in: 0..<count, using: &random), to: Int.random(in: 0..<count, using: &random),
                in: items, of: "m")
        case 16..<18 where count > 0:
            let index = Int.random(in: 0..<count, using: &random)
            try store.set(.int(Int.random(in: 0..<1000, using: &random)), at: items.appending(index: index).appending("v"), in: "m")
        case 18 where Int.random(in: 0..<4, using: &random) == 0:
            try store.set(.array(Deque((0..<Int.random(in: 0..<15, using: &random)).map { _ in row() })), at: items, in: "m")
        case 19 where count > 1:
            let first = row(), removed = Int.random(in: 0..<count, using: &random)
            let at = Int.random(in: 0..<count, using: &random)
            try store.write("m") { (editor: inout ModelEditor) throws(StoreError) in
                try editor.remove(at: items.appending(index: removed))
                try editor.insert(first, at: at, in: items)
            }
        default:
            try store.append(row(), to: items, in: "m")
        }
    }

    @Test func movingAWindowMidStreamLosesAndRepeatsNothing() throws {
        let store = Store()
        try store.put("m", ["items": Self.rows(60), "mark": 0])
        try withRunningServer(store: store) { port in
            let stream = try TestEventStream(port: port, target: "/events?sub=m/items;offset=10;limit=8&sub=m/mark")
            let streamID = try #require(try stream.next()?.object()["stream"] as? String)
            var replica = try LocationReplica(model: "m", pointer: "/items")
            try replica.apply(try #require(try stream.next()))
            _ = try stream.next()
            let items = try Path(pointer: "/items")
            let writing = Atomic<Bool>(true)
            let writer = Thread {
                var random = SplitMix(seed: 99)
                var nextID = 1000
                while writing.load(ordering: .relaxed) {
                    try? Self.randomWrite(store, items, &random, &nextID)
                    usleep(200)
                }
            }
            writer.start()
            var current = "offset=10;limit=8"
            let windows = [
                #"{"sub":"m/items","offset":20,"limit":5}"#: "offset=20;limit=5",
                #"{"sub":"m/items","last":6}"#: "last=6",
                #"{"sub":"m/items","first":9}"#: "first=9",
                #"{"sub":"m/items","offset":3,"limit":12}"#: "offset=3;limit=12"
            ]
            var snapshots = 0
            for (body, spec) in windows.sorted(by: { $0.key < $1.key }) {
                #expect(try TestHTTPClient.send(port: port, "PATCH", "/events/\(streamID)", body).status == 204)
                // Events in the old coordinates until the new window's snapshot, then the new ones.
                for _ in 0..<5000 {
                    let event = try #require(try stream.next())
                    guard try replica.concerns(event) else { continue }
                    try replica.apply(event)
                    if event.type == "snapshot" { snapshots += 1; break }
                }
                current = spec
                usleep(20_000)
            }
            writing.store(false, ordering: .relaxed)
            while !writer.isFinished { usleep(1000) }
            try store.set(1, at: Path(pointer: "/mark"), in: "m")
            for _ in 0..<5000 {
                let event = try #require(try stream.next())
                if try event.object()["path"] as? String == "/mark" { break }
                try replica.apply(event)
            }
            #expect(snapshots == windows.count)
            let all = try store.value(of: "m", at: items).arrayValue!
            let expected = Self.slice(all, current)
            #expect(replica.value == .array(Deque(all[expected])))
            #expect(replica.window?.offset == Self.offset(all, current) && replica.window?.length == all.count)
            #expect(Set(replica.ids).count == replica.ids.count)
        }
    }

    @Test func windowsLargerThanTheLimitAreRefused() throws {
        let store = Store()
        try store.put("m", ["items": [1, 2, 3]])
        try withRunningServer(store: store, configure: { $0.streams.maxWindow = 5 }) { port in
            var open: [TestEventStream] = []
            for (query, status) in [
                ("first=5", 200), ("first=6", 422), ("last=6", 422), ("offset=1;limit=6", 422), ("limit=5", 200),
                ("offset=9223372036854775807;limit=5", 200), ("offset=9223372036854775808;limit=5", 400)
            ] {
                let stream = try TestEventStream(port: port, target: "/events?sub=m/items;\(query)")
                #expect(stream.status == status, "\(query)")
                if status == 200 {
                    open.append(stream)
                    // The stream tells the client the limit, so it can keep its windows within it.
                    let announced = try stream.next(2).first
                    #expect(announced?.type == "stream" && announced?.data.hasSuffix(#","maxWindow":5}"#) == true)
                }
                if status == 422 {
                    let problem = TestHTTPResponse(status: stream.status, headers: stream.headers, body: stream.errorBody)
                    let body = try problem.object()
                    #expect(problem.isProblem(422) && (body["detail"] as? String)?.contains("--max-window") == true)
                    // … and so does the refusal, for a client that asked before it knew.
                    #expect(body["setting"] as? String == "max-window" && body["limit"] as? Int == 5)
                }
            }
            // Every window that opened still follows the array, the one past any end included.
            try store.append(4, to: Path(pointer: "/items"), in: "m")
            for stream in open { #expect(try stream.next()?.data.contains(#""length":4"#) == true) }
        }
    }
}
