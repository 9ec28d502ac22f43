import Foundation
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// What a client holds for one `sub` location, kept by applying the stream's events to it as a browser
/// would: snapshots and `set`s of the location replace it, changes below it are applied at their path
/// relative to it (window-relative for a window), and `window` members move the window.
struct LocationReplica {
    let model: String
    let path: Path
    var value: JSON = .null
    var exists = false
    var window: (offset: Int, length: Int)?
    /// Ids of the commit events applied, in order.
    var ids: [UInt64] = []

    init(model: String, pointer: String) throws {
        self.model = model
        path = try Path(pointer: pointer)
    }

    /// Whether `event` is about this location: its model, and a path at or below the location.
    func concerns(_ event: TestEvent) throws -> Bool {
        let object = try event.object()
        guard object["model"] as? String == model else { return false }
        if event.type == "batch" || event.type == "drop" { return true }
        guard let pointer = object["path"] as? String else { return false }
        return path.isPrefix(of: try Path(pointer: pointer))
    }

    /// Applies one event about this location.
    mutating func apply(_ event: TestEvent) throws {
        let data = try JSON(parsing: event.data)
        if event.type != "snapshot", let id = event.id.flatMap(UInt64.init) { ids.append(id) }
        if let window = data["window"] {
            self.window = (window["offset"]!.intValue!, window["length"]!.intValue!)
        }
        switch event.type {
        case "snapshot":
            value = data["value"]!
            exists = data["exists"] != .bool(false)
        case "drop":
            value = .null
            exists = false
        case "length":
            break
        case "batch":
            for change in data["changes"]!.arrayValue! {
                try applyChange(change, kind: change["kind"]!.stringValue!)
            }
        default:
            try applyChange(data, kind: event.type)
        }
    }

    private mutating func applyChange(_ change: JSON, kind: String) throws {
        let changePath = try Path(pointer: change["path"]!.stringValue!)
        guard path.isPrefix(of: changePath) else { return }
        let relative = Path(Array(changePath.components.dropFirst(path.components.count)))
        if relative.isRoot && kind == "set" {
            value = change["value"]!
            exists = change["exists"] != .bool(false)
            return
        }
        let made = Change(
            kind: Change.Kind(rawValue: kind)!, path: relative, value: change["value"],
            index: change["index"]?.intValue, from: change["from"]?.intValue, to: change["to"]?.intValue)
        try value.replay(made)
        exists = true
    }
}

extension JSON {
    var intValue: Int? { if case .int(let value) = self { value } else { nil } }
}
