import Benchmark
import DequeModule
import LiveBindEngine

// Patches as the server applies them (PATCH with json-patch+json or merge-patch+json), pre-parsed.
// Two patches alternate so that every application changes the model and the model stays the same size.

/// Ten RFC 6902 operations: six replaces, an append and a remove-first on a log, a test and an add.
func makeJSONPatch(_ value: Int) -> JSON {
    var operations: [JSON] = (0..<6).map { sensor in
        ["op": "replace", "path": .string("/sensors/s\(sensor)/value"), "value": .int(value * 10 + sensor)]
    }
    operations.append(["op": "add", "path": "/log/-", "value": ["seq": .int(value)]])
    operations.append(["op": "remove", "path": "/log/0"])
    operations.append(["op": "test", "path": "/sensors/s0/value", "value": .int(value * 10)])
    operations.append(["op": "add", "path": "/status", "value": .string("state-\(value)")])
    return .array(Deque(operations))
}

func makeSensorsModel() -> JSON {
    .object([
        "sensors": .object(.init(uniqueKeysWithValues: (0..<6).map { ("s\($0)", ["value": 0]) })),
        "log": .array(Deque((0..<20).map { ["seq": .int($0)] })),
        "status": "idle"
    ])
}

/// A merge patch that sets every member of a 50-key object.
func makeMergePatch(_ value: Int) -> JSON {
    .object(.init(uniqueKeysWithValues: (0..<50).map { ("key\($0)", JSON.int(value * 100 + $0)) }))
}

func registerPatchBenchmarks() {
    Benchmark("patch/json-patch-10-ops", configuration: scalarConfiguration) { benchmark in
        let store = Store()
        let patches = [makeJSONPatch(1), makeJSONPatch(2)]
        guard orFail(benchmark, { () throws(StoreError) in try store.put("bench", makeSensorsModel()) }) != nil
        else { return }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            _ = orFail(benchmark) { () throws(StoreError) in try store.jsonPatch(patches[i & 1], in: "bench") }
        }
        benchmark.stopMeasurement()
    }

    Benchmark("patch/merge-patch-50-keys", configuration: scalarConfiguration) { benchmark in
        let store = Store()
        let patches = [makeMergePatch(1), makeMergePatch(2)]
        let config = Path.root.appending("config")
        guard
            orFail(benchmark, { () throws(StoreError) in try store.put("bench", ["config": makeMergePatch(0)]) })
                != nil
        else { return }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            _ = orFail(benchmark) { () throws(StoreError) in
                try store.mergePatch(patches[i & 1], at: config, in: "bench")
            }
        }
        benchmark.stopMeasurement()
    }
}
