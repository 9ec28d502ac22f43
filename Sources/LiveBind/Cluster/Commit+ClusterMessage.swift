import LiveBindEngine
/// The commits of one write turn as one message of the cluster's stream (group commit): every write
/// that ran in the turn, with what its bindings derived, is stored by every node entirely or not at all.
///
/// The header `LiveBind-Sequence` holds the first commit's sequence (its event id); the others follow
/// it one by one. `LiveBind-Node` names the node that published it. Event ids are the store's, not the stream's: a binding change made over HTTP is a
/// message with no event id, and one message carries many. The body is each commit in turn, as the
/// line `c <revision> <model bytes> <record bytes>` (with ` <tag bytes>` when the commit has a tag: an
/// idempotency receipt) and a newline, then the model's name, the commit's record (see
/// `Commit+Record.swift`) and its tag.
///
/// Version 0.1 published one commit per message, its sequence the message's stream sequence, with the
/// model and revision in headers (`LiveBind-Model`, `LiveBind-Revision`); such messages are still read.
enum CommitMessage {
    static let sequenceHeader = "LiveBind-Sequence"
    /// The node that published the message.
    static let nodeHeader = "LiveBind-Node"
    static let modelHeader = "LiveBind-Model"
    static let revisionHeader = "LiveBind-Revision"
    /// The headers a reader of the stream asks for.
    static let headerNames = [sequenceHeader, nodeHeader, modelHeader, revisionHeader]

    /// The body of the message carrying `commits`, with `records` their encoded records.
    static func body(_ commits: [Commit], records: [[UInt8]]) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(records.reduce(0) { $0 + $1.count + 32 } + commits.reduce(0) { $0 + $1.model.utf8.count })
        for (commit, record) in zip(commits, records) {
            body += "c ".utf8
            body.appendDecimal(commit.revision)
            body.append(UInt8(ascii: " "))
            body.appendDecimal(UInt64(commit.model.utf8.count))
            body.append(UInt8(ascii: " "))
            body.appendDecimal(UInt64(record.count))
            if let tag = commit.tag {
                body.append(UInt8(ascii: " "))
                body.appendDecimal(UInt64(tag.utf8.count))
            }
            body.append(UInt8(ascii: "\n"))
            body += commit.model.utf8
            body += record
            if let tag = commit.tag { body += tag.utf8 }
        }
        return body
    }

    /// The commits `message` carries, in order, or why it carries none this code reads.
    static func commits(in message: StreamMessage) throws(CommitRecordError) -> [Commit] {
        guard let first = message.headers[sequenceHeader] else {
            guard let model = message.headers[modelHeader], let revisionText = message.headers[revisionHeader],
                let revision = UInt64(revisionText)
            else {
                throw CommitRecordError(sequence: message.sequence, reason: "the message has no sequence, model or revision header")
            }
            return [try Commit(record: message.body, sequence: message.sequence, model: model, revision: revision)]
        }
        guard var sequence = UInt64(first), sequence > 0 else {
            throw CommitRecordError(sequence: message.sequence, reason: "its sequence header is no sequence")
        }
        var commits: [Commit] = []
        let body = message.body
        var position = 0
        while position < body.count {
            func fail(_ reason: String) -> CommitRecordError {
                CommitRecordError(sequence: sequence, reason: "message \(message.sequence): \(reason)")
            }
            guard let end = body[position...].prefix(100).firstIndex(of: UInt8(ascii: "\n")) else { throw fail("a commit line has no end") }
            let fields = body[position..<end].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
            guard fields.count == 4 || fields.count == 5, fields[0].elementsEqual("c".utf8), let revision = decimal(fields[1]),
                let modelCount = decimal(fields[2]).flatMap(Int.init(exactly:)),
                let recordCount = decimal(fields[3]).flatMap(Int.init(exactly:)),
                let tagCount = fields.count == 5 ? decimal(fields[4]).flatMap(Int.init(exactly:)) : 0,
                modelCount <= body.count - end - 1, recordCount <= body.count - end - 1 - modelCount,
                tagCount <= body.count - end - 1 - modelCount - recordCount
            else {
                throw fail("a commit line is not one")
            }
            let modelStart = end + 1, recordStart = modelStart + modelCount, tagStart = recordStart + recordCount
            guard let model = String(validating: body[modelStart..<recordStart], as: UTF8.self),
                let tag = String(validating: body[tagStart..<tagStart + tagCount], as: UTF8.self)
            else {
                throw fail("a model name or tag is not UTF-8")
            }
            var commit = try Commit(record: body[recordStart..<tagStart], sequence: sequence, model: model, revision: revision)
            if fields.count == 5 { commit.tag = tag }
            commits.append(commit)
            // The next commit's sequence, and the one after the last, must exist.
            let (following, overflow) = sequence.addingReportingOverflow(1)
            guard !overflow else { throw fail("its sequences run past the largest event id") }
            sequence = following
            position = tagStart + tagCount
        }
        guard !commits.isEmpty else { throw CommitRecordError(sequence: sequence, reason: "message \(message.sequence) holds no commit") }
        return commits
    }

    /// The decimal number `digits` spells, nil when it spells none (or one past `UInt64`).
    private static func decimal(_ digits: ArraySlice<UInt8>) -> UInt64? {
        guard !digits.isEmpty, digits.count <= 20 else { return nil }
        var value: UInt64 = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            value = sum
        }
        return value
    }
}
