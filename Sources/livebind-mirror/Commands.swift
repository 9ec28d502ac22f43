import Foundation
import DequeModule
import LiveBindClient

/// The command protocol: one JSON object a line in, one answer a line out, in order.
/// `{"ok":true,"result":…}` or `{"ok":false,"error":{"kind","status","problem"}}`.
struct Commands {
    let client: LiveBindClient
    let mirror: ServerMirror?

    func run() async {
        while let line = readLine() {
            guard let command = try? JSON(parsing: line), let op = command["op"]?.stringValue else {
                answer(.failure(.invalidTarget("not a command: \(line)")))
                continue
            }
            let result: Result<JSON, LiveBindClientError>
            do throws(LiveBindClientError) {
                result = .success(try await perform(op, command))
            } catch {
                result = .failure(error)
            }
            answer(result)
            if op == "close" { return }
        }
        await mirror?.close()
    }

    func perform(_ op: String, _ command: JSON) async throws(LiveBindClientError) -> JSON {
        let target = command["target"]?.stringValue ?? ""
        switch op {
        case "synced":
            guard let mirror else { return .bool(true) }
            return .bool(await mirror.waitUntilSynced(timeout: .seconds(command["timeout"]?.doubleValue ?? 10)))
        case "value":
            return try mirrored().value(of: target) ?? .null
        case "revision":
            return .int(Int(try mirrored().revision(of: target)))
        case "set":
            var ifMatch: Bool?
            if case .bool(let given)? = command["if_match"] { ifMatch = given }
            return try await mirrored().set(command["value"] ?? .null, at: target, ifMatch: ifMatch) ?? .null
        case "status":
            guard let status = mirror?.status else { return .null }
            return .object([
                "connections": .int(status.connections), "reconnects": .int(status.reconnects),
                "resyncs": .int(status.resyncs), "synced": .bool(status.isSynced),
                "error": status.error.map { .object(["status": .int($0.status ?? 0), "problem": Self.problem($0)]) } ?? .null
            ])
        case "queued":
            return .array(Deque(client.queuedWrites().map(Self.record)))
        case "rejected":
            return .array(
                Deque(
                    client.rejectedWrites.map {
                        .array([.int($0.error.status ?? 0), Self.problem($0.error), Self.record($0.write)])
                    }))
        case "flush":
            return .int(await client.flushQueue())
        case "enqueue":
            try client.enqueue(
                command["method"]?.stringValue ?? "PUT", command["path"]?.stringValue ?? "",
                body: command["body"])
            return .null
        case "window":
            guard let window = try mirrored().window(of: try shown(target)) else { return .null }
            return .object(["offset": .int(window.offset), "length": .int(window.length)])
        case "move_window":
            func number(_ name: String) -> Int? { command[name]?.doubleValue.map { Int($0) } }
            try await mirrored().moveWindow(
                try shown(target), offset: number("offset"), limit: number("limit"),
                first: number("first"), last: number("last"))
            return .null
        case "close":
            await mirror?.close()
            return .null
        default:
            throw .invalidTarget("no command \(op)")
        }
    }

    /// The window or view target written `text`.
    func shown(_ text: String) throws(LiveBindClientError) -> MirrorTarget {
        guard let target = try mirrored().targets.first(where: { $0.sub == text && $0.showsRows }) else {
            throw .invalidTarget("\(text) is no window or view of this mirror")
        }
        return target
    }

    func mirrored() throws(LiveBindClientError) -> ServerMirror {
        guard let mirror else { throw .invalidTarget("this process mirrors nothing") }
        return mirror
    }

    func answer(_ result: Result<JSON, LiveBindClientError>) {
        let line: JSON
        switch result {
        case .success(let value):
            line = .object(["ok": .bool(true), "result": value])
        case .failure(let error):
            let kind: String
            switch error {
            case .conflict: kind = "conflict"
            case .refused: kind = "http"
            case .unreachable: kind = "offline"
            case .invalidTarget: kind = "usage"
            }
            line = .object([
                "ok": .bool(false),
                "error": .object([
                    "kind": .string(kind), "status": error.status.map { .int($0) } ?? .null, "problem": Self.problem(error),
                    "detail": .string(error.description)
                ])
            ])
        }
        FileHandle.standardOutput.write(Data(line.encoded() + [UInt8(ascii: "\n")]))
    }

    static func problem(_ error: LiveBindClientError) -> JSON {
        switch error {
        case .conflict(_, let problem), .refused(_, let problem): problem
        default: .object(["detail": .string(error.description)])
        }
    }

    static func record(_ write: QueuedWrite) -> JSON {
        .object([
            "key": .string(write.key), "method": .string(write.method), "path": .string(write.path),
            "body": write.body ?? .null, "has_body": .bool(write.body.map { _ in true } ?? false),
            "if_match": write.ifMatch.map { .int(Int($0)) } ?? .null
        ])
    }
}
