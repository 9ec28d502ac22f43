import LiveBindEngine
internal import LiveBindHTTP
/// `GET /events?since=…`: what a stream sends before its live events, from the data directory's
/// history, and the event its live part resumes after — so one stream draws the past and goes on
/// live with no gap and nothing twice.
///
/// Raw (no `step`): a `snapshot` of each model as it was at the point (one id group), then every
/// event of those models the history kept after it, grouped by id as live events are. With `step`
/// and `path`: one `history` event holding that location's buckets (the answer of `?history&step=`),
/// then a `snapshot` of each model as the history's last event left it.
enum HistoryReplay {
    /// The bytes to send first, and the event they end at.
    static func prefix(
        models: [String], since: HistoryEndpoint.Point, step: String?, path: String?,
        endpoint: HistoryEndpoint
    ) throws -> (bytes: [UInt8], through: UInt64) {
        guard let history = endpoint.history else { throw HistoryError.off }
        guard !models.isEmpty else {
            throw RequestError.badRequest("since= replays whole models: name them with model= (sub= locations have no replay)")
        }
        let through = try history.bounds().last
        var bytes: [UInt8] = []
        if let step {
            guard let path, models.count == 1 else {
                throw RequestError.badRequest("since= with step= needs one model= and the path= of the location to put in buckets")
            }
            let (answer, covered) = try endpoint.buckets(models[0], path, from: since, step: step, through: through)
            let (snapshots, _) = try history.replay(
                models, after: covered, through: covered, limit: 0, scan: 0,
                maxBytes: endpoint.maxBytes)
            EventEncoder.header(sequence: covered, event: "history", id: snapshots.isEmpty, into: &bytes)
            try append(answer, to: &bytes, endpoint.maxBytes)
            var piece = Array("\n\n".utf8)
            appendSnapshots(snapshots, at: covered, into: &piece)
            try append(piece, to: &bytes, endpoint.maxBytes)
            return (bytes, covered)
        }
        let start = try endpoint.resolve(since, history, clamped: true).sequence
        let (snapshots, commits) = try history.replay(
            models, after: start, through: through, limit: endpoint.limits.maxPoints,
            scan: endpoint.limits.maxScan, maxBytes: endpoint.maxBytes)
        var piece: [UInt8] = []
        appendSnapshots(snapshots, at: start, into: &piece)
        try append(piece, to: &bytes, endpoint.maxBytes)
        // Ids close groups: an event keeps its `id:` line only when the next one is of another write.
        // Each frame is made when it is sent, and refused before it is copied in past the limit.
        var frames = commits.lazy.map(EventEncoder.frame(for:)).makeIterator()
        var next = frames.next()
        while let frame = next {
            next = frames.next()
            if let following = next, following.id == frame.id, let line = frame.idLine {
                try append(Array(frame.bytes[..<line.lowerBound]) + frame.bytes[line.upperBound...], to: &bytes, endpoint.maxBytes)
            } else {
                try append(frame.bytes, to: &bytes, endpoint.maxBytes)
            }
        }
        // Every event of these models through `through` is replayed: the live part resumes after it,
        // not after the models' own last event, which may be long gone from the hub's retained events
        // when other models were busier.
        return (bytes, max(start, through, commits.last?.eventID ?? start))
    }

    /// Appends what the stream sends first, refused past `--history-max-bytes` before it is copied in.
    private static func append(_ more: [UInt8], to bytes: inout [UInt8], _ maxBytes: Int) throws {
        try HistoryAnswer.append(more, to: &bytes, limit: maxBytes) {
            "the replay holds more than \(maxBytes) bytes; start later, or name fewer models"
        }
    }

    /// The snapshots of one moment: only the last carries the id.
    private static func appendSnapshots(_ snapshots: [ModelSnapshot], at sequence: UInt64, into bytes: inout [UInt8]) {
        for (index, snapshot) in snapshots.enumerated() {
            EventEncoder.appendSnapshot(snapshot, sequence: sequence, id: index == snapshots.count - 1, into: &bytes)
        }
    }
}
