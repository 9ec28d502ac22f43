import Collections

/// What a snapshot is made of, as the last message of `<snapshots>.manifest`: the snapshot's bytes
/// (an encoded ``ClusterSnapshot``) are the bodies of the `chunks` messages of the same stream, in
/// order, each small enough for one NATS message: `{"sequence":S,"round":R,"bytes":B,"chunks":[…]}`.
///
/// libnats 3.4.1 (Debian's) has no JetStream object store, which would chunk the same way; chunks in
/// the snapshot stream need nothing the 2.9.10 server lacks.
struct SnapshotManifest: Sendable, Equatable {
    /// The stream sequence the snapshot was cut at.
    var sequence: UInt64
    /// The snapshot interval it belongs to (`sequence / --cluster-snapshot-interval`).
    var round: UInt64
    /// The snapshot's size: the chunks' bodies add up to it.
    var bytes: Int
    /// The snapshot stream's sequences of the chunk messages, in order.
    var chunks: [UInt64]

    /// The message body.
    func encoded() -> [UInt8] {
        let document: JSON = .object([
            "sequence": .int(Int(sequence)), "round": .int(Int(round)), "bytes": .int(bytes),
            "chunks": .array(Deque(chunks.map { .int(Int($0)) })),
        ])
        return document.encoded()
    }

    /// The manifest a message body holds.
    init(body: [UInt8]) throws(ClusterError) {
        guard let document = try? JSON(parsing: body), case .int(let sequence)? = document["sequence"],
              case .int(let round)? = document["round"], case .int(let bytes)? = document["bytes"],
              sequence >= 0, round >= 0, bytes >= 0, let list = document["chunks"]?.arrayValue else {
            throw .diverged("the last snapshot's manifest cannot be read")
        }
        var chunks: [UInt64] = []
        for entry in list {
            guard case .int(let chunk) = entry, chunk > 0 else { throw .diverged("the last snapshot's manifest cannot be read") }
            chunks.append(UInt64(chunk))
        }
        self.init(sequence: UInt64(sequence), round: UInt64(round), bytes: bytes, chunks: chunks)
    }

    init(sequence: UInt64, round: UInt64, bytes: Int, chunks: [UInt64]) {
        self.sequence = sequence
        self.round = round
        self.bytes = bytes
        self.chunks = chunks
    }
}
