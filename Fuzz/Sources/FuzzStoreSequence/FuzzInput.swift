import OrderedCollections
import DequeModule
import LiveBind

/// The fuzzer's bytes read as decisions: every read takes the next byte, and 0 once they run out, so
/// every input decodes to some sequence of operations and a longer input to a longer one.
struct FuzzInput {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    var isAtEnd: Bool { position >= bytes.count }

    /// The next byte (0 past the end).
    mutating func byte() -> Int {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return Int(bytes[position])
    }

    /// A number in `0..<count` (`count` at most 256).
    mutating func choose(_ count: Int) -> Int { byte() % count }

    /// One of `options`.
    mutating func pick<Element>(_ options: [Element]) -> Element { options[choose(options.count)] }

    // MARK: Names, keys and paths

    static let models = ["a", "b", "c"]
    /// Member names: mostly a few short ones (so writes meet), some that need escaping as text or pointer.
    static let keys = ["x", "y", "z", "id", "0", "1", "-", "a/b", "m~n", "é", "\"q\"", "\u{1}", ""]

    mutating func model() -> String { pick(Self.models) }

    mutating func key() -> String { pick(Self.keys) }

    /// A path inside `document`: it walks down through existing members and elements for a while, then
    /// maybe adds one component that may or may not exist (a new member, `-`, an index past the end).
    mutating func path(in document: JSON) -> Path {
        var components = walk(document).components
        switch choose(4) {
        case 0: components.append(key())
        case 1: components.append(pick(["-", "0", "1", "7", "01", "-1"]))
        default: break
        }
        return Path(components)
    }

    /// The deepest array the walk down `document` passed (often one there is), else any path.
    mutating func arrayPath(in document: JSON) -> Path {
        let walked = walk(document)
        return walked.lastArray ?? path(in: document)
    }

    /// Walks down through existing members and elements while the bytes say so.
    private mutating func walk(_ document: JSON) -> (components: [String], lastArray: Path?) {
        var components: [String] = []
        var lastArray: Path?
        var current = document
        while true {
            if case .array = current { lastArray = Path(components) }
            guard choose(4) != 0 else { break }
            switch current {
            case .object(let members) where !members.isEmpty:
                let index = choose(members.count)
                components.append(members.keys[index])
                current = members.values[index]
            case .array(let elements) where !elements.isEmpty:
                let index = choose(elements.count)
                components.append(String(index))
                current = elements[index]
            default:
                return (components, lastArray)
            }
        }
        return (components, lastArray)
    }

    // MARK: Values

    static let doubles: [Double] = [
        0.5, -0.0, 1e300, -1e-300, 1e-7, 0.1, 3.141592653589793, 1e21, 123456789.125, 9007199254740994,
        .leastNonzeroMagnitude, 1.7976931348623157e308, .infinity, -.infinity, .nan
    ]
    static let strings = ["", "a", "\"", "\\", "\n\t\r\u{8}\u{C}", "\u{1}\u{1F}", "é", "😀", "</script>", "\u{2028}"]

    /// A small value, or one meant to meet a limit: a nesting chain up to 11 deep (the fuzz store allows 8),
    /// a string up to about 2 KB, a wide array, or a copy of what a model holds (copies share storage, so
    /// they grow a model's size fastest).
    mutating func value(in store: Store, budget: Int = 2) -> JSON {
        switch choose(14) {
        case 0: return .null
        case 1: return .bool(choose(2) == 1)
        case 2: return .int(byte() - 128)
        case 3: return .int(pick([Int.max, Int.min, 1 << 53, -(1 << 31), 1_000_000_007]))
        case 4: return .double(pick(Self.doubles))
        case 5: return .string(pick(Self.strings) + pick(Self.strings))
        case 6: return .string(String(repeating: pick(["w", "\"", "é"]), count: byte() * 8))
        case 7 where budget > 0:
            return .array(Deque((0..<choose(5)).map { _ in value(in: store, budget: budget - 1) }))
        case 8 where budget > 0:
            var members: OrderedDictionary<String, JSON> = [:]
            for _ in 0..<choose(5) { members[key()] = value(in: store, budget: budget - 1) }
            return .object(members)
        case 9:
            return chain(depth: choose(12))
        case 10, 11:
            let model = self.model()
            guard let document = try? store.value(of: model) else { return .null }
            return (try? store.value(of: model, at: path(in: document))) ?? document
        case 12:
            return .array(Deque((0..<byte() / 4).map { JSON.int($0) }))
        default:
            return .object(["id": .int(choose(4)), "v": .string(pick(Self.strings))])
        }
    }

    /// `depth` containers, each the only member or element of the one outside it.
    mutating func chain(depth: Int) -> JSON {
        var value: JSON = .int(depth)
        for level in 0..<depth {
            value = level % 2 == 0 ? .array([value]) : .object([key(): value])
        }
        return value
    }

    /// An object (what `put` takes), sometimes deeper or larger than the limits allow.
    mutating func document(in store: Store) -> JSON {
        switch choose(4) {
        case 0: return .object([:])
        case 1: return .object(["list": .array([1, 2, 3]), "n": .object(["x": 1])])
        default:
            let value = self.value(in: store)
            if case .object = value { return value }
            return .object([key(): value])
        }
    }
}
