/// One encoded piece of an event stream, shared by every subscriber that receives it.
///
/// A commit is encoded once into a frame; subscribers hold references to it, never copies.
final class EventFrame: Sendable {
    /// The commit's sequence (the SSE `id`); for a comment, the latest sequence when it was made.
    let sequence: UInt64
    /// The model the frame is about; nil for frames every subscriber gets (heartbeats).
    let model: String?
    /// Whether this frame carries a commit (ids are skipped on resume) rather than a comment.
    let isCommit: Bool
    /// The bytes on the wire, ending with the blank line.
    let bytes: [UInt8]

    init(sequence: UInt64, model: String?, isCommit: Bool, bytes: [UInt8]) {
        self.sequence = sequence
        self.model = model
        self.isCommit = isCommit
        self.bytes = bytes
    }

    /// Whether a subscriber with this model filter (nil = all models) receives the frame.
    func isWanted(by models: Set<String>?) -> Bool {
        guard let models, let model else { return true }
        return models.contains(model)
    }
}
