import DequeModule
import LiveBindEngine

/// A snapshot as the snapshot stream holds it: chunk messages, each within `max_payload`, and one
/// small manifest message naming the chunks of the snapshot's index (``SnapshotIndex``).
///
/// libnats 3.4.1 (Debian's) has no JetStream object store, which would chunk the same way; chunks in
/// the snapshot stream need nothing the 2.9.10 server lacks.
///
/// The manifest is the last message of `<snapshots>.manifest`:
/// `{"sequence":S,"events":E,"round":R,"bytes":B,"chunks":[…]}`.
struct SnapshotManifest: Sendable, Equatable {
    /// The stream sequence the snapshot was cut at.
    var sequence: UInt64
    /// The event id the snapshot was cut at: the last commit's sequence (without `events`, a manifest
    /// of 0.1's, in which event ids were stream sequences: `sequence`).
    var events: UInt64
    /// The snapshot interval it belongs to (`sequence / --cluster-snapshot-interval`).
    var round: UInt64
    /// The index's size: the index chunks' bodies add up to it.
    var bytes: Int
    /// The snapshot stream's sequences of the index's chunks, in order.
    var chunks: [UInt64]

    /// The message body.
    func encoded() -> [UInt8] {
        JSON.object([
            "sequence": .int(Int(sequence)), "events": .int(Int(events)), "round": .int(Int(round)), "bytes": .int(bytes),
            "chunks": Self.list(chunks)
        ]).encoded()
    }

    /// The manifest a message body holds.
    init(body: [UInt8]) throws(ClusterError) {
        guard let document = try? JSON(parsing: body), case .int(let sequence)? = document["sequence"],
            case .int(let round)? = document["round"], case .int(let bytes)? = document["bytes"],
            sequence >= 0, round >= 0, bytes >= 0, let chunks = Self.sequences(document["chunks"])
        else {
            throw .diverged("the last snapshot's manifest cannot be read")
        }
        var events = UInt64(sequence)
        if let value = document["events"] {
            guard case .int(let number) = value, number >= 0 else { throw .diverged("the last snapshot's manifest cannot be read") }
            events = UInt64(number)
        }
        self.init(sequence: UInt64(sequence), events: events, round: UInt64(round), bytes: bytes, chunks: chunks)
    }

    init(sequence: UInt64, events: UInt64, round: UInt64, bytes: Int, chunks: [UInt64]) {
        self.sequence = sequence
        self.events = events
        self.round = round
        self.bytes = bytes
        self.chunks = chunks
    }

    static func list(_ sequences: [UInt64]) -> JSON { .array(Deque(sequences.map { .int(Int($0)) })) }

    /// Stream sequences from a JSON array, nil when it is not one.
    static func sequences(_ value: JSON?) -> [UInt64]? {
        guard let list = value?.arrayValue else { return nil }
        var sequences: [UInt64] = []
        for entry in list {
            guard case .int(let sequence) = entry, sequence > 0 else { return nil }
            sequences.append(UInt64(sequence))
        }
        return sequences
    }
}

/// What a snapshot holds, as the bytes of its manifest's chunks: the models in segments, the bindings
/// made over HTTP, and the chunks the snapshot before it no longer shares with it.
///
/// A segment is the encoded documents of one or more models, back to back, in chunks. A model that
/// did not change since the snapshot before keeps its segment: a new snapshot stores only the models
/// that changed (and its index), however large the rest of the state.
struct SnapshotIndex: Sendable {
    struct Segment: Sendable {
        /// The chunks holding the segment's bytes, in order.
        var chunks: [UInt64]
        /// The segment's size.
        var bytes: Int
        /// Where each model's document lies in the segment's bytes.
        var models: [(name: String, revision: UInt64, offset: Int, length: Int)]
    }

    var segments: [Segment]
    /// The bindings made over HTTP (`[{"id","definition","enabled"}]`).
    var bindings: [(id: String, definition: JSON, enabled: Bool)]
    /// Chunks of the snapshot before this one that this one does not use: deleted once the snapshot
    /// after this one is stored (a node may still be reading the one before until then).
    var retired: [UInt64]
    /// The receipts of idempotent writes still in their window at the cut
    /// (`[[tag, sequence, model, revision, insertIndex or -1, created ms]]`).
    var receipts: [CommitReceipt] = []
    /// The receipts of idempotent `/bindings` writes still in their window, as the server encodes
    /// them (`AnswerReceipt`).
    var answers: [JSON] = []

    /// The index's bytes.
    func encoded() -> [UInt8] {
        let segments = segments.map { segment -> JSON in
            let models = segment.models.map { model -> JSON in
                .object([
                    "name": .string(model.name), "rev": .int(Int(model.revision)),
                    "offset": .int(model.offset), "length": .int(model.length)
                ])
            }
            return .object([
                "chunks": SnapshotManifest.list(segment.chunks), "bytes": .int(segment.bytes),
                "models": .array(Deque(models))
            ])
        }
        let bindings = bindings.map { binding -> JSON in
            .object(["id": .string(binding.id), "definition": binding.definition, "enabled": .bool(binding.enabled)])
        }
        let receipts = receipts.map { receipt -> JSON in
            .array([
                .string(receipt.tag), .int(Int(receipt.sequence)), .string(receipt.model), .int(Int(receipt.revision)),
                .int(receipt.insertIndex ?? -1), .int(Int(receipt.created * 1000))
            ])
        }
        return JSON.object([
            "segments": .array(Deque(segments)), "bindings": .array(Deque(bindings)),
            "retired": SnapshotManifest.list(retired), "receipts": .array(Deque(receipts)),
            "answers": .array(Deque(answers))
        ]).encoded()
    }

    /// The index `bytes` (its chunks joined) holds.
    init(bytes: [UInt8]) throws(ClusterError) {
        let unreadable = ClusterError.diverged("the last snapshot's index cannot be read")
        guard let document = try? JSON(parsing: bytes, maxDepth: StoreLimits.depthCeiling + 4),
            let segmentList = document["segments"]?.arrayValue, let retired = SnapshotManifest.sequences(document["retired"])
        else { throw unreadable }
        var segments: [Segment] = []
        for entry in segmentList {
            guard let chunks = SnapshotManifest.sequences(entry["chunks"]), case .int(let size)? = entry["bytes"],
                let modelList = entry["models"]?.arrayValue
            else { throw unreadable }
            var models: [(name: String, revision: UInt64, offset: Int, length: Int)] = []
            for model in modelList {
                guard let name = model["name"]?.stringValue, case .int(let revision)? = model["rev"],
                    case .int(let offset)? = model["offset"], case .int(let length)? = model["length"],
                    revision >= 0, offset >= 0, length >= 0, offset + length <= size
                else { throw unreadable }
                models.append((name, UInt64(revision), offset, length))
            }
            segments.append(Segment(chunks: chunks, bytes: size, models: models))
        }
        var bindings: [(id: String, definition: JSON, enabled: Bool)] = []
        for entry in document["bindings"]?.arrayValue ?? [] {
            guard let id = entry["id"]?.stringValue, let definition = entry["definition"],
                case .bool(let enabled)? = entry["enabled"]
            else { throw unreadable }
            bindings.append((id, definition, enabled))
        }
        var receipts: [CommitReceipt] = []
        for entry in document["receipts"]?.arrayValue ?? [] {
            guard let fields = entry.arrayValue, fields.count == 6, let tag = fields[0].stringValue,
                case .int(let sequence) = fields[1], let model = fields[2].stringValue, case .int(let revision) = fields[3],
                case .int(let index) = fields[4], case .int(let created) = fields[5], sequence > 0, revision >= 0
            else { throw unreadable }
            receipts.append(
                CommitReceipt(
                    tag: tag, sequence: UInt64(sequence), model: model, revision: UInt64(revision),
                    insertIndex: index >= 0 ? index : nil, created: Double(created) / 1000))
        }
        self.init(segments: segments, bindings: bindings, retired: retired)
        self.receipts = receipts
        answers = Array(document["answers"]?.arrayValue ?? [])
    }

    init(segments: [Segment], bindings: [(id: String, definition: JSON, enabled: Bool)], retired: [UInt64]) {
        self.segments = segments
        self.bindings = bindings
        self.retired = retired
    }

    /// Every chunk the snapshot uses, its index's aside.
    var chunks: [UInt64] { segments.flatMap(\.chunks) }
}
