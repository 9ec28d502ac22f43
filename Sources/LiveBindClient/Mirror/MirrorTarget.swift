/// What a mirror follows, and where in the local store it keeps it.
///
/// Written as the server's `sub` (docs/HTTP.md, "Path subscriptions"): a model (`"sensor"`), a
/// location in one (`"orders/items"`, a JSON Pointer after the model, `~0`/`~1` escaped), an array
/// window (`"readings/items;last=20"`, `;first=N`, `;offset=K;limit=N`) or a server view
/// (`"orders/items;where=status:eq:open;order=-time;limit=20"`). Windows and views are read-only
/// here. By default the local store keeps it at the same model and pointer; `into` names another
/// place (`"recent/rows"`): two views of one array need places of their own.
public struct MirrorTarget: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The target as written.
    public let sub: String
    /// The model on the server.
    public let model: String
    /// The location inside it (`.root`: the whole model).
    public let path: Path
    /// The local model and location that hold it.
    public let localModel: String
    public let localPath: Path
    /// For a window or a view: its parameters as written after the location (`"last=20"`,
    /// `"where=…;order=…;limit=20"`); nil for a model or a location.
    public let parameters: String?
    /// Whether the server arranges it as a view (`where=` or `order=`): its events carry `view`.
    public let isView: Bool

    /// A target from its written form; throws `LiveBindClientError.invalidTarget` when it is none.
    public init(_ sub: String, into local: String? = nil) throws(LiveBindClientError) {
        self.sub = sub
        var rest = Substring(sub)
        var names: Set<String> = []
        var parametersStart: String.Index?
        while let semicolon = rest.lastIndex(of: ";") {
            let parameter = rest[rest.index(after: semicolon)...]
            guard let equals = parameter.firstIndex(of: "=") else { break }
            let name = String(parameter[..<equals]), value = parameter[parameter.index(after: equals)...]
            guard ["first", "last", "offset", "limit", "where", "order"].contains(name) else { break }
            guard names.insert(name).inserted else { throw .invalidTarget("\(sub): \(name) is given twice") }
            if !["where", "order"].contains(name), value.isEmpty || !value.allSatisfy({ $0.isASCII && $0.isNumber }) {
                throw .invalidTarget("\(sub): \(name) must be a whole number of rows")
            }
            parametersStart = rest.index(after: semicolon)
            rest = rest[..<semicolon]
        }
        isView = names.contains("where") || names.contains("order")
        if isView, names.contains("first") || names.contains("last") {
            throw .invalidTarget("\(sub): a view takes offset= and limit=, not first= or last=")
        }
        parameters = parametersStart.map { String(sub[$0...]) }
        (model, path) = try Self.split(String(rest), in: sub)
        if let local {
            (localModel, localPath) = try Self.split(local, in: sub)
        } else {
            (localModel, localPath) = (model, path)
        }
    }

    public init(stringLiteral value: String) {
        do throws(LiveBindClientError) { try self.init(value) } catch { preconditionFailure(error.description) }
    }

    public var description: String { sub }

    /// Whether it shows rows of an array (a window or a view): read-only in the mirror.
    public var showsRows: Bool { parameters != nil }

    /// The location as written in a `sub` (model, then the pointer), without parameters.
    var location: String { model + path.pointer }

    /// ("model", path) of "model" or "model/pointer…".
    static func split(_ text: String, in sub: String) throws(LiveBindClientError) -> (String, Path) {
        let slash = text.firstIndex(of: "/") ?? text.endIndex
        let model = String(text[..<slash])
        guard Store.isValidModelName(model) else { throw .invalidTarget("\(sub): \"\(model)\" is no model name") }
        do {
            return (model, try Path(pointer: String(text[slash...])))
        } catch {
            throw .invalidTarget("\(sub): \(error.description)")
        }
    }
}
