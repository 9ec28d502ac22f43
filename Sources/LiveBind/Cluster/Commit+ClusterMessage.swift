/// A commit as a message of the cluster's stream: its record (see `Commit+Record.swift`) as the body,
/// the model and revision as headers; the sequence is the message's stream sequence.
extension Commit {
    static let modelHeader = "LiveBind-Model"
    static let revisionHeader = "LiveBind-Revision"

    /// The headers that go with this commit's record.
    var clusterHeaders: [(String, String)] {
        [(Self.modelHeader, model), (Self.revisionHeader, String(revision))]
    }

    /// The commit `message` carries, or why it carries none this code reads.
    init(message: StreamMessage) throws(CommitRecordError) {
        guard let model = message.headers[Self.modelHeader], let revisionText = message.headers[Self.revisionHeader],
              let revision = UInt64(revisionText) else {
            throw CommitRecordError(sequence: message.sequence, reason: "the message has no model or revision header")
        }
        try self.init(record: message.body, sequence: message.sequence, model: model, revision: revision)
    }
}
