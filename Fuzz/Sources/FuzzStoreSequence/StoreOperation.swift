import OrderedCollections
import DequeModule
import LiveBind

/// One operation of a fuzzed sequence, decoded from the input against the store as it is now (so paths
/// mostly name what exists).
enum StoreOperation: CustomStringConvertible {
    case set(JSON, Path, model: String, ifRevision: UInt64?)
    case insert(JSON, index: Int, array: Path, model: String)
    case append(JSON, array: Path, model: String)
    case remove(Path, model: String)
    case replace(index: Int, array: Path, model: String, with: JSON)
    case move(from: Int, to: Int, array: Path, model: String)
    case put(String, JSON, ifRevision: UInt64?)
    case drop(String)
    case jsonPatch(JSON, model: String)
    case mergePatch(JSON, at: Path, model: String)
    /// Several edits in one `Store.write`: all of them or, if one throws, none.
    case edits([(JSON, Path)], model: String)

    static func decode(_ input: inout FuzzInput, store: Store) -> StoreOperation {
        let model = input.model()
        let document = (try? store.value(of: model)) ?? .object([:])
        switch input.choose(11) {
        case 0: return .set(input.value(in: store), input.path(in: document), model: model, ifRevision: revision(&input, store, model))
        case 1: return .insert(input.value(in: store), index: index(&input), array: input.arrayPath(in: document), model: model)
        case 2: return .append(input.value(in: store), array: input.arrayPath(in: document), model: model)
        case 3: return .remove(input.path(in: document), model: model)
        case 4: return .replace(index: index(&input), array: input.arrayPath(in: document), model: model, with: input.value(in: store))
        case 5: return .move(from: index(&input), to: index(&input), array: input.arrayPath(in: document), model: model)
        case 6:
            return .put(input.choose(16) == 0 ? "bad.name" : model, input.document(in: store), ifRevision: revision(&input, store, model))
        case 7: return .drop(model)
        case 8: return .jsonPatch(patch(&input, store: store, document: document), model: model)
        case 9:
            let patch: JSON = input.choose(3) == 0 ? input.value(in: store) : input.document(in: store)
            return .mergePatch(patch, at: input.path(in: document), model: model)
        default:
            let edits = (0..<(1 + input.choose(4))).map { _ in (input.value(in: store), input.path(in: document)) }
            return .edits(edits, model: model)
        }
    }

    /// Mostly no revision; sometimes the current one, a stale one, or 0 ("must not exist").
    private static func revision(_ input: inout FuzzInput, _ store: Store, _ model: String) -> UInt64? {
        let current = store.modelNames().first { $0.name == model }?.revision ?? 0
        switch input.choose(8) {
        case 0: return current
        case 1: return current &+ 1
        case 2: return 0
        default: return nil
        }
    }

    private static func index(_ input: inout FuzzInput) -> Int { input.pick([0, 1, 2, 3, -1, 9, 64]) }

    /// 1 to 20 operations (the fuzz store allows 16), each on a path in the document as it is now.
    private static func patch(_ input: inout FuzzInput, store: Store, document: JSON) -> JSON {
        var operations: Deque<JSON> = []
        for _ in 0..<(1 + input.choose(20)) {
            let path = input.path(in: document).pointer
            var operation: OrderedDictionary<String, JSON> = [
                "op": .string(input.pick(["add", "remove", "replace", "move", "copy", "test"]))
            ]
            operation["path"] = .string(input.choose(8) == 0 ? "" : path)
            switch operation["op"] {
            case "move", "copy":
                operation["from"] = .string(input.choose(4) == 0 ? "" : input.path(in: document).pointer)
            case "remove":
                break
            default:
                operation["value"] = input.value(in: store)
            }
            if input.choose(16) == 0 { operation["op"] = "unknown" }
            operations.append(.object(operation))
        }
        return .array(operations)
    }

    /// Runs the operation; what the store answered.
    func run(on store: Store) throws -> WriteResult {
        switch self {
        case .set(let value, let path, let model, let revision):
            return try store.set(value, at: path, in: model, ifRevision: revision)
        case .insert(let value, let index, let array, let model):
            return try store.insert(value, at: index, in: array, of: model)
        case .append(let value, let array, let model):
            return try store.append(value, to: array, in: model)
        case .remove(let path, let model):
            return try store.remove(at: path, in: model)
        case .replace(let index, let array, let model, let value):
            return try store.replace(at: index, in: array, of: model, with: value)
        case .move(let from, let to, let array, let model):
            return try store.move(from: from, to: to, in: array, of: model)
        case .put(let model, let value, let revision):
            return try store.put(model, value, ifRevision: revision).result
        case .drop(let model):
            return try store.drop(model)
        case .jsonPatch(let operations, let model):
            return try store.jsonPatch(operations, in: model)
        case .mergePatch(let patch, let path, let model):
            return try store.mergePatch(patch, at: path, in: model)
        case .edits(let edits, let model):
            return try store.write(model) { (editor: inout ModelEditor) throws(StoreError) in
                for (value, path) in edits { try editor.set(value, at: path) }
            }
        }
    }

    var description: String {
        switch self {
        case .set(let value, let path, let model, let revision):
            "set \(value) at \(path.pointer) in \(model) if \(String(describing: revision))"
        case .insert(let value, let index, let array, let model): "insert \(value) at \(index) of \(array.pointer) in \(model)"
        case .append(let value, let array, let model): "append \(value) to \(array.pointer) in \(model)"
        case .remove(let path, let model): "remove \(path.pointer) in \(model)"
        case .replace(let index, let array, let model, let value): "replace \(index) of \(array.pointer) in \(model) with \(value)"
        case .move(let from, let to, let array, let model): "move \(from) to \(to) in \(array.pointer) of \(model)"
        case .put(let model, let value, let revision): "put \(model) \(value) if \(String(describing: revision))"
        case .drop(let model): "drop \(model)"
        case .jsonPatch(let operations, let model): "JSON Patch \(operations) on \(model)"
        case .mergePatch(let patch, let path, let model): "merge patch \(patch) at \(path.pointer) of \(model)"
        case .edits(let edits, let model): "write \(edits.map { "\($0.1.pointer)=\($0.0)" }) in \(model)"
        }
    }
}
