/// Entry points for the client's fuzz target in `Fuzz/` (`@_spi(Fuzzing) import LiveBindClient`): what
/// a server (or anything posing as one) sends the client — the event stream's bytes and the events'
/// data — and the targets an application writes. Not part of the public API.
@_spi(Fuzzing) public enum ClientFuzzing {
    /// The events of `bytes` read whole and read in two chunks cut at `cut`: a parser that depends on
    /// where chunks end gives two different lists. Nil when the stream is refused (a line too long).
    public static func events(_ bytes: [UInt8], cut: Int, maxLineBytes: Int) -> (whole: [String], cut: [String])? {
        func read(_ chunks: [ArraySlice<UInt8>]) -> [String]? {
            var parser = EventStreamParser(maxLineBytes: maxLineBytes)
            var events: [String] = []
            for chunk in chunks {
                guard let found = try? parser.feed(chunk) else { return nil }
                events += found.map { "\($0.id ?? "-")|\($0.name)|\($0.data)" }
            }
            return events
        }
        let cut = min(max(cut, 0), bytes.count)
        guard let whole = read([bytes[...]]), let split = read([bytes[..<cut], bytes[cut...]]) else { return nil }
        return (whole, split)
    }

    /// Applies the stream's events in `bytes` (an event per `event:`/`data:` pair, as the server sends
    /// them) to `store` as a mirror of `targets` would, each event as its own group. Returns how many
    /// applied; an event the mirror would refuse (it starts over then) is skipped.
    public static func apply(_ bytes: [UInt8], targets: [String], to store: Store) -> Int {
        let mirrored = targets.compactMap { try? MirrorTarget($0) }
        var parser = EventStreamParser(maxLineBytes: 1 << 16)
        guard let events = try? parser.feed(bytes + [10, 10]) else { return 0 }
        var applied = 0
        for event in events {
            guard let data = try? JSON(parsing: event.data, maxDepth: 64),
                let edits = try? ServerMirror.localEdits(event.name, data, targets: mirrored)
            else { continue }
            for (index, list) in edits where (try? ServerMirror.apply(list, to: store, model: mirrored[index].localModel)) != nil {
                applied += 1
            }
        }
        return applied
    }

    /// A target as written, read back: its location and parameters joined again, or nil when refused.
    public static func target(_ text: String) -> String? {
        guard let target = try? MirrorTarget(text) else { return nil }
        return target.location + (target.parameters.map { ";" + $0 } ?? "")
    }
}
