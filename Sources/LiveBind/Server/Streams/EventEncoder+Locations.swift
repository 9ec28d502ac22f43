import LiveBindEngine
/// The events of path subscriptions and windows (`?sub=`): a location's snapshot, its changes, and a
/// window's `length`. Each is encoded for one stream (a window's coordinates are the stream's own).
extension EventEncoder {
    /// The first event of a stream with `sub` values: the id that `PATCH /events/{stream}` takes, and
    /// the most rows a window may have on this server (`--max-window`).
    static func stream(id: String, maxWindow: Int) -> [UInt8] {
        Array("event: stream\ndata: {\"stream\":\"\(id)\",\"maxWindow\":\(maxWindow)}\n\n".utf8)
    }

    /// A `snapshot` of one location: `{"model","rev","path","value"[,"exists":false][,"window"]}`.
    static func appendLocationSnapshot(
        model: String, revision: UInt64, sequence: UInt64, path: Path, value: JSON,
        exists: Bool, window: Window.Position?, view: String? = nil, into bytes: inout [UInt8]
    ) {
        header(sequence: sequence, event: "snapshot", into: &bytes)
        appendPrefix(model: model, revision: revision, view: view, into: &bytes)
        bytes += #""path":"#.utf8
        JSON.string(path.pointer).encode(into: &bytes)
        bytes += #","value":"#.utf8
        value.encode(into: &bytes)
        if !exists { bytes += #","exists":false"#.utf8 }
        appendWindow(window, into: &bytes)
        bytes += "}\n\n".utf8
    }

    /// One commit's changes at a location: the change's own event for one, a `batch` for several;
    /// `window` (when the location is a window) is where the window is after them.
    static func appendLocationChanges(
        _ changes: [LocationChange], model: String, revision: UInt64, sequence: UInt64,
        window: Window.Position?, view: String? = nil, into bytes: inout [UInt8]
    ) {
        if changes.count == 1 {
            header(sequence: sequence, event: changes[0].change.kind.rawValue, into: &bytes)
            appendPrefix(model: model, revision: revision, view: view, into: &bytes)
            appendFields(of: changes[0], into: &bytes)
        } else {
            header(sequence: sequence, event: "batch", into: &bytes)
            appendPrefix(model: model, revision: revision, view: view, into: &bytes)
            bytes += #""changes":["#.utf8
            for (position, change) in changes.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes += #"{"kind":"\#(change.change.kind.rawValue)","#.utf8
                appendFields(of: change, into: &bytes)
                bytes.append(UInt8(ascii: "}"))
            }
            bytes.append(UInt8(ascii: "]"))
        }
        appendWindow(window, into: &bytes)
        bytes += "}\n\n".utf8
    }

    /// A window's `length` event: only the array's length (and perhaps the window's offset) changed.
    static func appendLength(
        model: String, revision: UInt64, sequence: UInt64, path: Path, window: Window.Position,
        view: String? = nil, into bytes: inout [UInt8]
    ) {
        header(sequence: sequence, event: "length", into: &bytes)
        appendPrefix(model: model, revision: revision, view: view, into: &bytes)
        bytes += #""path":"#.utf8
        JSON.string(path.pointer).encode(into: &bytes)
        bytes += #","length":\#(window.length)"#.utf8
        appendWindow(window, into: &bytes)
        bytes += "}\n\n".utf8
    }

    /// `{"model":…,"rev":…,` (open, ready for the next member), with `"view":…,` for a view's events.
    private static func appendPrefix(model: String, revision: UInt64, view: String? = nil, into bytes: inout [UInt8]) {
        bytes += #"{"model":"#.utf8
        JSON.string(model).encode(into: &bytes)
        bytes += #","rev":\#(revision),"#.utf8
        if let view {
            bytes += #""view":"#.utf8
            JSON.string(view).encode(into: &bytes)
            bytes.append(UInt8(ascii: ","))
        }
    }

    private static func appendFields(of change: LocationChange, into bytes: inout [UInt8]) {
        if !change.exists && change.change.value == nil {
            var change = change.change
            change.value = .null
            appendFields(of: change, into: &bytes)
        } else {
            appendFields(of: change.change, into: &bytes)
        }
        if !change.exists { bytes += #","exists":false"#.utf8 }
    }

    private static func appendWindow(_ window: Window.Position?, into bytes: inout [UInt8]) {
        guard let window else { return }
        bytes += #","window":{"offset":\#(window.offset),"length":\#(window.length)}"#.utf8
    }
}
