import Foundation
import Synchronization
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

extension ReliabilityTests {
    @Suite("Resuming after dropped connections") struct ResumeAfterDropsTests {
        static let minimumEvents = 1_500
        static let minimumDrops = 80

        @Test func randomDropsUnderSteadyWritesEndEqualToTheServerWithNoGapAndNoDuplicate() throws {
            let seed = UInt64(UInt32.random(in: 1...UInt32.max))
            var random = SplitMix(seed: seed)
            let store = Store()
            try store.put("m", ["counter": 0, "items": []])
            try withRunningServer(store: store, configure: { $0.streams.retainedEvents = 100_000 }) { port in
                let stop = SharedCount()
                let writer = TestThread { try Self.writeSteadily(store, until: stop) }
                defer { stop.add(); try? writer.join(seconds: 30) }

                var client = ResumingClient()
                let clock = ContinuousClock()
                let deadline = clock.now + .seconds(120)
                while (client.drops < Self.minimumDrops || client.applied < Self.minimumEvents) && clock.now < deadline {
                    // Close at a random byte: often inside a frame, sometimes right after the head.
                    let budget = Int.random(in: 0...6_000, using: &random)
                    try client.connect(port: port, store: store, budget: budget)
                    // Stay away a little now and then, so the resume has events to replay.
                    if Bool.random(using: &random) { usleep(UInt32.random(in: 1_000...20_000, using: &random)) }
                    guard client.failure == nil else { break }
                }
                stop.add()
                try writer.join(seconds: 30)
                // Catch up with everything written, on one more resumed connection.
                try client.connect(port: port, store: store, budget: .max, until: store.lastSequence)

                #expect(client.failure == nil, "\(client.failure ?? "")")
                #expect(client.drops >= Self.minimumDrops)
                #expect(client.applied >= Self.minimumEvents)
                #expect(client.lastID == store.lastSequence)
                #expect(client.resyncs == 0, "the retained log holds every event of this run, so no resume should need a resync")
                let server = try TestHTTPClient.getObject(port: port, "/models/m")
                let reconstructed = try JSONSerialization.jsonObject(with: Data(client.document.encoded())) as? [String: Any]
                #expect(NSDictionary(dictionary: reconstructed ?? [:]).isEqual(to: server))
                print(
                    "Resume after drops (seed \(seed)): \(client.applied) events applied, \(client.drops) drops "
                        + "(\(client.midFrameDrops) inside a frame), \(client.replayed) events replayed after Last-Event-ID, "
                        + "\(client.resyncs) resyncs, last id \(client.lastID), server at \(store.lastSequence)")
            }
        }

        /// Writes set, append, remove and two-change batches, one every ~0.3 ms, until `stop`.
        static func writeSteadily(_ store: Store, until stop: SharedCount) throws {
            let counter = Path.root.appending("counter"), items = Path.root.appending("items")
            var step = 0
            while stop.value == 0 && step < 200_000 {
                step += 1
                switch step % 4 {
                case 0: try store.set(.int(step), at: counter, in: "m")
                case 1: try store.append(["id": .int(step), "v": .string("row \(step)")], to: items, in: "m")
                case 2:
                    let count = try store.value(of: "m", at: items).arrayValue?.count ?? 0
                    if count > 12 {
                        try store.remove(at: items.appending("0"), in: "m")
                    } else {
                        try store.set(.int(-step), at: counter, in: "m")
                    }
                default:
                    try store.write("m") { (editor: inout ModelEditor) throws(StoreError) in
                        try editor.set(.int(step), at: counter)
                        _ = try editor.append(["id": .int(step), "v": .string("batch \(step)")], to: items)
                    }
                }
                usleep(300)
            }
        }
    }
}

/// A client that reads `/events` for a while, drops the connection, and resumes with
/// `Last-Event-ID`, rebuilding the model from the events and checking every id.
struct ResumingClient {
    var document: JSON = .null
    var lastID: UInt64 = 0
    var applied = 0
    var drops = 0
    var midFrameDrops = 0
    var replayed = 0
    var resyncs = 0
    var failure: String?
    private var started = false

    /// One connection: reads up to `budget` body bytes (or until event `until` was applied), applies
    /// every complete event, then closes, dropping any partial frame as a browser would.
    mutating func connect(port: Int, store: Store, budget: Int, until: UInt64? = nil) throws {
        let socket = try TestSocket(port: port, timeout: 10)
        var head = "GET /events?model=m HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        if started { head += "Last-Event-ID: \(lastID)\r\n" }
        let writtenBefore = store.lastSequence
        try socket.send(head + "\r\n")
        let (status, _) = try TestHTTPClient.readHead(from: socket)
        guard status == 200 else { failure = "status \(status)"; return }
        var body: [UInt8] = []
        var consumed = 0
        while failure == nil {
            if let until, lastID >= until { break }
            if until == nil && consumed >= budget { break }
            guard var chunk = try TestHTTPClient.readChunk(from: socket) else { failure = "stream ended"; return }
            if until == nil && consumed + chunk.count > budget { chunk = Array(chunk.prefix(budget - consumed)) }
            consumed += chunk.count
            body += chunk
            while let end = Self.blankLine(in: body) {
                let frame = String(decoding: body[..<end], as: UTF8.self)
                body.removeFirst(end + 2)
                apply(frame, writtenBefore: writtenBefore)
            }
        }
        if until == nil {
            drops += 1
            if !body.isEmpty { midFrameDrops += 1 }
        }
    }

    /// The index of the first "\n\n" (the end of an event).
    private static func blankLine(in bytes: [UInt8]) -> Int? {
        var index = 0
        while index + 1 < bytes.count {
            if bytes[index] == 10 && bytes[index + 1] == 10 { return index }
            index += 1
        }
        return nil
    }

    private mutating func apply(_ frame: String, writtenBefore: UInt64) {
        var id: UInt64?, type = "message", data = ""
        for line in frame.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("id: ") {
                id = UInt64(line.dropFirst(4))
            } else if line.hasPrefix("event: ") {
                type = String(line.dropFirst(7))
            } else if line.hasPrefix("data: ") {
                data = String(line.dropFirst(6))
            }
        }
        guard !data.isEmpty else { return }  // retry line, heartbeat
        guard let id else { failure = "event without id: \(frame)"; return }
        do {
            let value = try JSON(parsing: data)
            switch type {
            case "resync":
                resyncs += 1
                return
            case "snapshot":
                guard id >= lastID else { failure = "snapshot #\(id) older than #\(lastID)"; return }
                document = value["value"] ?? .null
            default:
                guard started, id == lastID + 1 else {
                    failure = "event #\(id) after #\(lastID): \(id <= lastID ? "duplicate" : "gap")"
                    return
                }
                if type == "batch" {
                    for change in value["changes"]?.arrayValue ?? [] {
                        try Self.apply(change["kind"]?.stringValue ?? "", change, to: &document)
                    }
                } else {
                    try Self.apply(type, value, to: &document)
                }
                applied += 1
                if id <= writtenBefore { replayed += 1 }
            }
            started = true
            lastID = id
        } catch {
            failure = "cannot apply \(frame): \(error)"
        }
    }

    /// Applies one change (`set`, `insert`, `remove`) whose path is a top-level member.
    private static func apply(_ kind: String, _ change: JSON, to document: inout JSON) throws {
        let path = try Path(pointer: change["path"]?.stringValue ?? "")
        guard case .object(var members) = document, let key = path.components.first, path.components.count == 1 else {
            throw TestSocketError(description: "unexpected path \(path)")
        }
        let index = change["index"].flatMap { if case .int(let number) = $0 { number } else { nil } }
        switch (kind, index) {
        case ("set", _): members[key] = change["value"] ?? .null
        case ("insert", let index?):
            var elements = members[key]?.arrayValue ?? []
            elements.insert(change["value"] ?? .null, at: index)
            members[key] = .array(elements)
        case ("remove", let index?):
            var elements = members[key]?.arrayValue ?? []
            elements.remove(at: index)
            members[key] = .array(elements)
        case ("remove", nil): members[key] = nil
        default: throw TestSocketError(description: "unexpected change \(kind)")
        }
        document = .object(members)
    }
}
