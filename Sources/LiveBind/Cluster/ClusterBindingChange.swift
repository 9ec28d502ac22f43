import LiveBindEngine
/// A change to the bindings made over HTTP, as a message of the cluster's stream (subject
/// `<stream>.bindings`): every node applies it to its registry, in stream order.
enum ClusterBindingChange: Sendable, Equatable {
    /// A binding made with `POST /bindings`: its definition, with its `id`.
    case create(id: String, definition: JSON)
    /// `PATCH /bindings/{id}` with `{"enabled": …}`.
    case setEnabled(id: String, enabled: Bool)
    /// `DELETE /bindings/{id}`.
    case delete(id: String)

    static let operationHeader = "LiveBind-Binding"
    static let idHeader = "LiveBind-Binding-ID"
    /// The idempotency tag of the request that made the change (see `AnswerReceipt`): printable ASCII.
    static let tagHeader = "LiveBind-Tag"

    var id: String {
        switch self {
        case .create(let id, _), .setEnabled(let id, _), .delete(let id): id
        }
    }

    /// The message's headers and body.
    var message: (headers: [(String, String)], body: [UInt8]) {
        switch self {
        case .create(let id, let definition):
            ([(Self.operationHeader, "create"), (Self.idHeader, id)], definition.encoded())
        case .setEnabled(let id, let enabled):
            ([(Self.operationHeader, enabled ? "enable" : "disable"), (Self.idHeader, id)], [])
        case .delete(let id):
            ([(Self.operationHeader, "delete"), (Self.idHeader, id)], [])
        }
    }

    /// The change a message carries, nil when it is not one this code reads.
    init?(message: StreamMessage) {
        guard let operation = message.headers[Self.operationHeader], let id = message.headers[Self.idHeader] else { return nil }
        switch operation {
        case "create":
            guard let definition = try? JSON(parsing: message.body), case .object = definition else { return nil }
            self = .create(id: id, definition: definition)
        case "enable": self = .setEnabled(id: id, enabled: true)
        case "disable": self = .setEnabled(id: id, enabled: false)
        case "delete": self = .delete(id: id)
        default: return nil
        }
    }
}
