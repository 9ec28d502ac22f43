import LiveBindEngine
/// One encoded piece of an event stream, shared by every subscriber that receives it.
///
/// A commit is encoded once into a frame; subscribers hold references to it, never copies.
final class EventFrame: Sendable {
    /// The commit's sequence (its place in the log); for a comment, the latest sequence when it was made.
    let sequence: UInt64
    /// The SSE `id` it goes out with: its sequence, except for the events of a write to several
    /// models, which all carry the write's last sequence (`Commit.eventID`).
    let id: UInt64
    /// The model the frame is about; nil for frames every subscriber gets (heartbeats).
    let model: String?
    /// Whether this frame carries a commit (ids are skipped on resume) rather than a comment.
    let isCommit: Bool
    /// The bytes on the wire, ending with the blank line.
    let bytes: [UInt8]
    /// Where its `id:` line is (with its newline), if it has one. A frame of several events has one on
    /// its last event only: ids close groups (see `EventHub.read`), and the reader leaves the line out
    /// when the stream's next frame closes the same group or the stream already sent that id.
    let idLine: Range<Int>?

    /// A frame of `bytes` with the id `id` (nil: `sequence`); `idLineAt` is where its `id:` line starts
    /// when that is not at the start.
    init(sequence: UInt64, id: UInt64? = nil, model: String?, isCommit: Bool, bytes: [UInt8], idLineAt start: Int = 0) {
        self.sequence = sequence
        self.id = id ?? sequence
        self.model = model
        self.isCommit = isCommit
        self.bytes = bytes
        idLine = Self.idLine(in: bytes, at: start)
    }

    private static func idLine(in bytes: [UInt8], at start: Int) -> Range<Int>? {
        let prefix: [UInt8] = [UInt8(ascii: "i"), UInt8(ascii: "d"), UInt8(ascii: ":"), UInt8(ascii: " ")]
        guard start >= 0, bytes.count >= start + prefix.count, bytes[start..<start + prefix.count].elementsEqual(prefix) else {
            return nil
        }
        var end = start + prefix.count
        while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
        return start..<min(end + 1, bytes.count)
    }

    /// Whether a subscriber with this model filter receives the frame.
    func isWanted(by models: ModelFilter) -> Bool {
        guard let model else { return true }
        return models.wants(model)
    }
}

/// Which models a stream receives: the models it named (nil = all), narrowed to a token's prefixes.
struct ModelFilter: Sendable, Hashable {
    /// Model names asked for with `?model=`; nil means every model.
    var names: Set<String>?
    /// Model-name prefixes the stream's token reaches; nil means every model.
    var prefixes: [String]?

    /// Every model.
    static let all = ModelFilter()

    /// Whether the stream receives `model`'s events.
    func wants(_ model: String) -> Bool {
        if let names, !names.contains(model) { return false }
        guard let prefixes else { return true }
        return prefixes.contains { model.hasPrefix($0) }
    }

    /// Whether the stream may receive events of some model whose name starts with `prefix`.
    func mayWant(prefix: String) -> Bool {
        if let names { return names.contains { $0.hasPrefix(prefix) && wants($0) } }
        guard let prefixes else { return true }
        return prefixes.contains { $0.hasPrefix(prefix) || prefix.hasPrefix($0) }
    }
}
