import DequeModule
import LiveBindEngine

// A small driver for profilers (valgrind --tool=callgrind, perf): runs one engine operation in a loop,
// with no benchmark harness around it.
//
//   swift build -c release --product EngineProfile
//   valgrind --tool=callgrind .build/release/EngineProfile set 100000

/// Keeps `value` alive without letting the optimizer drop the work that made it.
@inline(never) func consume<T>(_ value: T) { withExtendedLifetime(value) {} }

let arguments = CommandLine.arguments
let operation = arguments.count > 1 ? arguments[1] : "set"
let count = arguments.count > 2 ? Int(arguments[2]) ?? 100_000 : 100_000

func run() throws {
    let store = Store()
    switch operation {
    case "set":
        let path = Path.root.appending("sensor").appending("value")
        try store.put("bench", ["sensor": ["value": -1]])
        let observation = store.observe(path, in: "bench") { consume($0) }
        for i in 0..<count { try store.set(.int(i), at: path, in: "bench") }
        observation.cancel()
    case "hop":
        let registry = BindingRegistry(store: store)
        try store.put("bench", ["source": -1, "target": -2])
        try registry.bind(BindingSpec("bench.source", "bench.target", transform: TransformSpec("scale", ["factor": 2])))
        let observation = store.observe(Path.root.appending("target"), in: "bench") { consume($0) }
        let source = Path.root.appending("source")
        for i in 0..<count { try store.set(.int(i), at: source, in: "bench") }
        observation.cancel()
        consume(registry)
    case "append", "insert-first", "remove-first":
        // `count` operations on an array of `length` (third argument, default 100,000) elements.
        let length = arguments.count > 3 ? Int(arguments[3]) ?? 100_000 : 100_000
        let rows = Path.root.appending("rows"), first = rows.appending("0")
        let initial = operation == "remove-first" ? length + count : length  // removes never empty it
        try store.put("bench", .object(["rows": .array(Deque((0..<initial).map { JSON.int($0) }))]))
        try store.append(.int(-1), to: rows, in: "bench")  // takes the array's storage over from `put`
        for i in 0..<count {
            switch operation {
            case "append": try store.append(.int(i), to: rows, in: "bench")
            case "insert-first": try store.insert(.int(i), at: 0, in: rows, of: "bench")
            default: try store.remove(at: first, in: "bench")
            }
        }
    case "parse", "encode":
        // `count` parses (or encodings) of a model of 10,000 rows of four members (about 600 KB).
        let rows = (0..<10_000).map { #"{"id":\#($0),"name":"sensor-\#($0)","value":\#(Double($0) * 0.5),"ok":true}"# }
        let text = Array("{\"rows\":[\(rows.joined(separator: ","))]}".utf8)
        let model = try JSON(parsing: text)
        for _ in 0..<count {
            if operation == "parse" { consume(try JSON(parsing: text)) } else { consume(model.encoded()) }
        }
    case "view":
        // An arranged view ("open, newest first, top 50") of `length` orders (default 100,000) built,
        // then `count` changes of a row's status or time applied to it: the view's two treaps at work.
        let length = arguments.count > 3 ? Int(arguments[3]) ?? 100_000 : 100_000
        var rows: [JSON] = (0..<length).map { id in
            ["id": .int(id), "status": .string(id % 3 == 0 ? "open" : "done"), "time": .int((id &* 7919) % 1_000_003)]
        }
        let view = ArrangedArray(rows, query: try ViewQuery(where: "status:eq:open", order: "-time", limit: 50))
        let items = Path(["items"])
        for step in 1...max(count, 1) {
            let index = (step &* 104_729) % rows.count
            guard case .object(var members) = rows[index] else { continue }
            let field = step % 2 == 0 ? "status" : "time"
            let value: JSON = field == "status" ? (members["status"] == "open" ? "done" : "open") : .int((step &* 31) % 1_000_003)
            members[field] = value
            rows[index] = .object(members)
            consume(view.apply(Change(kind: .set, path: Path(["items", String(index), field]), value: value), at: items))
        }
    case "memory":
        // Where a model's bytes go: `count` is the MiB of JSON per shape (MemoryProfile.swift).
        try memoryProfile(mebibytes: count)
    default:
        print("usage: EngineProfile set|hop|append|insert-first|remove-first|parse|encode|view|memory [count] [length]")
    }
}

try run()
