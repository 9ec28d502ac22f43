import Foundation
import Synchronization

/// Why a stream ended, when it was not the network.
enum StreamEnd: Error {
    /// The server refused the stream: for good (`permanent`) or for now (`retryAfter` seconds).
    case refused(LiveBindClientError, permanent: Bool, retryAfter: Double?)
    /// The stream's credential ended (`auth_revoked`).
    case credentialEnded
    /// An event the mirror could not apply: start over from snapshots.
    case unreadable(String)
}

extension ServerMirror {
    /// Streams until closed: each connection, then a pause that backs off while connections fail.
    func run() async {
        var failures = 0
        while !state.withLock({ $0.closed }) {
            await flushQueue()
            var heard = false
            var wait: Double?
            do {
                heard = try await stream()
            } catch StreamEnd.refused(let error, let permanent, let retryAfter) {
                if permanent {
                    state.withLock { $0.error = error }
                    return
                }
                wait = retryAfter
            } catch StreamEnd.unreadable {
                state.withLock { $0.lastEventID = nil }
            } catch {
                // the network, a silent stream, an ended credential: connect again
            }
            let closed = state.withLock { state in
                state.connection = nil
                if !state.closed { state.reconnects += 1 }
                return state.closed
            }
            if closed { return }
            failures = heard ? 0 : failures + 1
            let pause = wait ?? min(10, 0.2 * Double(1 << min(failures, 6))) * Double.random(in: 0.5...1.5)
            try? await Task.sleep(for: .seconds(pause))
        }
    }

    /// Sends what waits in the queue file (every mirror of the client hears the answers), then lets go
    /// of this mirror's queued writes that left the file unheard (another process sent them).
    func flushQueue() async {
        guard client.queue != nil else { return }
        await client.flushQueue()
        settleQueued()
    }

    /// This mirror's queued writes that are no longer in the queue file, and whose answer it did not
    /// hear: the server's copy is the truth now, so they go and the mirror starts over from snapshots.
    func settleQueued() {
        guard let queue = client.queue,
            state.withLock({ $0.pending.contains { $0.phase == .queued } }),
            let keys = try? queue.withEntries({ Set($0.map(\.key)) })
        else { return }
        let gone = state.withLock { state in
            let gone = state.pending.filter { $0.phase == .queued && !keys.contains($0.key) }
            state.pending.removeAll { write in gone.contains { $0.key == write.key } }
            return gone
        }
        if !gone.isEmpty { refresh() }
    }

    /// One connection's events until it ends; returns whether a group of events was applied.
    func stream() async throws -> Bool {
        let query = streamQuery()
        let lastID = state.withLock { $0.lastEventID }
        var headers = ["Accept": "text/event-stream"]
        if let lastID { headers["Last-Event-ID"] = lastID }
        let request = client.transport.request("GET", "/events?" + query, headers: headers)
        let reader = Task { try await self.read(request, fresh: lastID == nil) }
        let stopped = state.withLock { state in
            state.connection = reader
            state.streamID = nil
            return state.closed
        }
        defer { reader.cancel() }
        if stopped { reader.cancel() }
        return try await reader.value
    }

    /// Reads the stream's events and applies them. A stream that served events and then ended or
    /// dropped returns true: connect again at once. One silent for two heartbeats (no line, not even
    /// the heartbeat's comment) is dropped by the transport, which measures it on its own thread:
    /// this process being slow to read is not the server being silent.
    private func read(_ request: HTTPRequest, fresh: Bool) async throws -> Bool {
        let response = try await client.transport.open(request, silence: heartbeat * 2)
        guard response.status == 200 else {
            let body = (try? await response.collect(upTo: 65536)) ?? Data()
            throw Self.streamRefusal(response.status, response.headers, body)
        }
        state.withLock { $0.connections += 1 }
        var parser = EventStreamParser(maxLineBytes: maxEventBytes)
        var group = Group(fresh: fresh)
        var heard = false
        do {
            for try await buffer in response.body {
                for event in try parser.feed(buffer) {
                    heard = try dispatch(event, &group) || heard
                }
            }
        } catch let end as StreamEnd {
            throw end
        } catch {
            if !heard { throw error }
        }
        return heard
    }

    /// The query of the stream: `model=` for whole models, `sub=` for the rest (windows where they
    /// were last moved to).
    func streamQuery() -> String {
        let moved = state.withLock { $0.windowParameters }
        return targets.indices.map { index in
            let target = targets[index]
            let parameters = moved[index] ?? target.parameters
            return target.path.isRoot && !target.showsRows
                ? "model=" + percentEncoded(target.model)
                : "sub=" + percentEncoded(target.location + (parameters.map { ";" + $0 } ?? ""), keepingSlash: true)
        }.joined(separator: "&")
    }

    static func streamRefusal(_ status: Int, _ headers: [String: String], _ body: Data) -> StreamEnd {
        let answer = HTTPAnswer(status: status, headers: headers, body: body)
        return .refused(
            .refusal(answer), permanent: [400, 401, 403, 404, 422].contains(status),
            retryAfter: answer.retryAfter)
    }

    static func isStreamID(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default:
                    false
                }
            }
    }

    /// The events of one group, gathered until its id arrives.
    struct Group {
        /// The stream started without `Last-Event-ID`, or resynced: its first group holds a snapshot of
        /// every model there is, so a whole model without one is gone.
        var fresh: Bool
        var events: [(name: String, data: JSON)] = []
        var bytes = 0
    }

    /// Takes one event: gathers it, or applies its group when it closes one. Returns whether it applied.
    func dispatch(_ event: ServerSentEvent, _ group: inout Group) throws -> Bool {
        let data: JSON
        do {
            data = event.data.isEmpty ? .null : try JSON(parsing: event.data)
        } catch {
            throw StreamEnd.unreadable("an event's data is not JSON: \(error)")
        }
        switch event.name {
        case "stream":
            // A stream id is base64url; anything else is not put in a path.
            let id = data["stream"]?.stringValue
            state.withLock { $0.streamID = id.flatMap { Self.isStreamID($0) ? $0 : nil } }
            return false
        case "auth_revoked":
            throw StreamEnd.credentialEnded
        case "resync":
            state.withLock { state in
                state.resyncs += 1
                state.heard = []
                state.synced = false
            }
            group = Group(fresh: true)
            return false
        case "snapshot" where data["path"] != nil && event.id == nil:
            try apply([(event.name, data)], id: nil, fresh: false)
            return true
        default:
            group.bytes += event.data.utf8.count
            guard group.bytes <= maxEventBytes * 4 else {
                throw StreamEnd.unreadable("a group of events past \(maxEventBytes * 4) bytes")
            }
            if data != .null { group.events.append((event.name, data)) }
        }
        guard let id = event.id else { return false }
        try apply(group.events, id: id, fresh: group.fresh)
        group = Group(fresh: false)
        return true
    }
}
