import DequeModule
import LiveBindEngine
internal import LiveBindHTTP

/// The receipt of a keyed write whose answer is not made from a commit (a `/bindings` change): its
/// ticket's tag and the answer itself, kept with the change so that a retry gets that answer after a
/// restart and on every node. With `--data` it is written in the change's own transaction; in a
/// cluster the change's message carries the tag and every node makes the answer as it applies the
/// change (`fireCount` and `lastError` in it are the applying node's); snapshots carry the receipts.
struct AnswerReceipt: Sendable {
    /// ``IdempotencyTicket/tag``.
    var tag: String
    var answer: IdempotencyTable.Answer
    /// The cluster stream's message that carried the change (0 with `--data`).
    var sequence: UInt64

    /// `[tag, sequence, status, [[header, value], …], body]`: what a data directory and a snapshot keep.
    var json: JSON {
        let headers = answer.headers.map { JSON.array([.string($0.0), .string($0.1)]) }
        return .array([
            .string(tag), .int(Int(sequence)), .int(answer.status), .array(Deque(headers)),
            .string(String(decoding: answer.body, as: UTF8.self))
        ])
    }

    init(tag: String, answer: IdempotencyTable.Answer, sequence: UInt64) {
        self.tag = tag
        self.answer = answer
        self.sequence = sequence
    }

    /// The receipt of the request tagged `tag` (none: nil) answered `response`, which carried its change
    /// in the stream's message `sequence`; nil when the answer is not one to give again (a 5xx).
    init?(tag: String?, response: HTTPResponse, sequence: UInt64) {
        guard let tag, let answer = IdempotencyTable.Answer(response) else { return nil }
        self.init(tag: tag, answer: answer, sequence: sequence)
    }

    /// What a data directory keeps of it.
    var record: StateDatabase.AnswerRecord {
        let created = IdempotencyTicket.parse(tag: tag)?.created.timeIntervalSince1970 ?? 0
        return StateDatabase.AnswerRecord(receipt: json, created: created)
    }

    /// The receipt `json` holds, nil when it is not one.
    init?(json: JSON) {
        guard let fields = json.arrayValue, fields.count == 5, let tag = fields[0].stringValue,
            case .int(let sequence) = fields[1], sequence >= 0, case .int(let status) = fields[2],
            let list = fields[3].arrayValue, let body = fields[4].stringValue
        else { return nil }
        var headers: [(String, String)] = []
        for header in list {
            guard let pair = header.arrayValue, pair.count == 2, let name = pair[0].stringValue,
                let value = pair[1].stringValue
            else { return nil }
            headers.append((name, value))
        }
        self.init(tag: tag, answer: .init(status: status, body: Array(body.utf8), headers: headers), sequence: UInt64(sequence))
    }
}
