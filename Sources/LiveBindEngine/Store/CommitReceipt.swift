/// What a tagged commit (see ``Store/withCommitTag(_:_:)``) leaves in a commit log besides itself: the
/// tag and what an answer to its write is made of, kept after the commit itself is compacted away.
package struct CommitReceipt: Sendable, Equatable {
    package var tag: String
    package var sequence: UInt64
    package var model: String
    package var revision: UInt64
    /// The index of the commit's last insert, if any (an insert's answer names it).
    package var insertIndex: Int?
    /// When it was made, in seconds since 1970.
    package var created: Double

    package init(tag: String, sequence: UInt64, model: String, revision: UInt64, insertIndex: Int?, created: Double) {
        self.tag = tag
        self.sequence = sequence
        self.model = model
        self.revision = revision
        self.insertIndex = insertIndex
        self.created = created
    }

    /// The receipt `commit` leaves, made at `created`; nil when it has no tag.
    package init?(_ commit: Commit, created: Double) {
        guard let tag = commit.tag else { return nil }
        var index: Int?
        if case .changes(let changes) = commit.kind { index = changes.last { $0.kind == .insert }?.index }
        self.init(
            tag: tag, sequence: commit.sequence, model: commit.model, revision: commit.revision,
            insertIndex: index, created: created)
    }
}
