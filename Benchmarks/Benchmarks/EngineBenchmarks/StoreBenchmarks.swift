import Benchmark
import DequeModule
import LiveBindEngine

// LiveBind's engine: the store's write paths, each measured with its setup outside the measurement.

/// A row of the kind a live table holds.
func makeRow(_ id: Int) -> JSON {
    ["id": .int(id), "name": .string("sensor-\(id)"), "value": .double(Double(id) * 0.5), "ok": true]
}

/// `{"rows": [row 0, row 1, …]}` with `count` rows.
func makeRowsModel(_ count: Int) -> JSON {
    .object(["rows": .array(Deque((0..<count).map(makeRow)))])
}

/// Puts `model` into `store` as "bench" and gives the array at `rows` (`length` elements) its own
/// storage with room for `count` more elements, so that a measured run of inserts is not charged for
/// one copy of the whole array (the copy-on-write of `model`'s storage, made exactly as large as
/// needed, and the growth right after it). Growing by doubling costs the same per insert at any length; it is left out here.
func makeRoom(_ store: Store, _ model: JSON, _ rows: Path, length: Int, _ count: Int) throws(StoreError) {
    try store.put("bench", model)
    for _ in 0...count { try store.append(makeRow(-1), to: rows, in: "bench") }
    for _ in 0...count { try store.remove(at: rows.appending("\(length)"), in: "bench") }
}

/// Runs `body`, turning a store error into a benchmark failure with its message.
func orFail<T>(_ benchmark: Benchmark, _ body: () throws(StoreError) -> T) -> T? {
    do {
        return try body()
    } catch {
        benchmark.error("\(error)")
        return nil
    }
}

func registerStoreBenchmarks() {
    // set through a pre-parsed path, one observer on that path: compare with the baselines.
    Benchmark("set/livebind-observe", configuration: scalarConfiguration) { benchmark in
        let store = Store()
        let path = Path.root.appending("sensor").appending("value")
        guard orFail(benchmark, { () throws(StoreError) in try store.put("bench", ["sensor": ["value": -1]]) }) != nil
        else { return }
        let observation = store.observe(path, in: "bench") { blackHole($0) }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            _ = orFail(benchmark) { () throws(StoreError) in try store.set(.int(i), at: path, in: "bench") }
        }
        benchmark.stopMeasurement()
        observation.cancel()
    }

    // Array operations on long arrays: the cost must not depend on the length.
    for length in [1_000, 100_000] {
        let model = makeRowsModel(length)
        let row = makeRow(-1)
        let rows = Path.root.appending("rows")
        let first = rows.appending("0")

        Benchmark("array/append/\(length)", configuration: arrayConfiguration) { benchmark in
            let store = Store()
            _ = orFail(benchmark) { () throws(StoreError) in
                try makeRoom(store, model, rows, length: length, benchmark.scaledIterations.count)
            }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                _ = orFail(benchmark) { () throws(StoreError) in try store.append(row, to: rows, in: "bench") }
            }
            benchmark.stopMeasurement()
        }

        Benchmark("array/insert-first/\(length)", configuration: arrayConfiguration) { benchmark in
            let store = Store()
            _ = orFail(benchmark) { () throws(StoreError) in
                try makeRoom(store, model, rows, length: length, benchmark.scaledIterations.count)
            }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                _ = orFail(benchmark) { () throws(StoreError) in try store.insert(row, at: 0, in: rows, of: "bench") }
            }
            benchmark.stopMeasurement()
        }

        Benchmark("array/remove-first/\(length)", configuration: arrayConfiguration) { benchmark in
            let store = Store()
            let ops = benchmark.scaledIterations.count
            _ = orFail(benchmark) { () throws(StoreError) in
                try store.put("bench", model)
                for _ in 0...ops { try store.append(row, to: rows, in: "bench") }  // length + ops after the first remove
                try store.remove(at: first, in: "bench")
            }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                _ = orFail(benchmark) { () throws(StoreError) in try store.remove(at: first, in: "bench") }
            }
            benchmark.stopMeasurement()
        }
    }

    // Snapshot encoding of a model of 1 MiB (as the server sends a `snapshot` event).
    Benchmark("snapshot/encode-1MiB", configuration: largeConfiguration) { benchmark in
        let store = Store()
        let rowBytes = makeRow(100_000).encoded().count + 1
        let model = makeRowsModel((1 << 20) / rowBytes)
        guard orFail(benchmark, { () throws(StoreError) in try store.put("big", model) }) != nil else { return }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            if let snapshot = orFail(benchmark, { () throws(StoreError) in try store.snapshot("big") }) {
                blackHole(snapshot.value.encoded())
            }
        }
        benchmark.stopMeasurement()
    }
}

// A one-way binding hop: set the source → the binding's transform → set of the target → its observer.
func registerBindingBenchmarks() {
    Benchmark("binding/livebind-hop", configuration: scalarConfiguration) { benchmark in
        let store = Store()
        let registry = BindingRegistry(store: store)
        let source = Path.root.appending("source")
        let target = Path.root.appending("target")
        guard
            orFail(benchmark, { () throws(StoreError) in try store.put("bench", ["source": -1, "target": -2]) })
                != nil
        else { return }
        do {
            try registry.bind(BindingSpec("bench.source", "bench.target", transform: TransformSpec("scale", ["factor": 2])))
        } catch {
            benchmark.error("\(error)")
            return
        }
        let observation = store.observe(target, in: "bench") { blackHole($0) }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            _ = orFail(benchmark) { () throws(StoreError) in try store.set(.int(i), at: source, in: "bench") }
        }
        benchmark.stopMeasurement()
        // The hop must really have happened: the target holds the last source value, scaled.
        let expected = Double(2 * (benchmark.scaledIterations.count - 1))
        switch try? store.value(of: "bench", at: target) {
        case .int(let value)? where Double(value) == expected: break
        case .double(let value)? where value == expected: break
        case let other: benchmark.error("binding did not update the target: \(String(describing: other))")
        }
        observation.cancel()
        withExtendedLifetime(registry) {}
    }

    // Making 1,000 bindings c.v0 → c.v1 → … → c.v1000 over a model that already holds their values:
    // the cycle check, the indexes and reading each source, not 1,000 commits of new values (until
    // 2026-11-29 a test held it under 50 ms of CPU time; timed bounds belong here, not in tests).
    Benchmark("binding/bind-1000-link-chain", configuration: largeConfiguration) { benchmark in
        guard let model = try? JSON(parsing: "{" + (0...1000).map { #""v\#($0)":0"# }.joined(separator: ",") + "}") else {
            return benchmark.error("the chain's model does not parse")
        }
        let specs = (0..<1000).map { BindingSpec("c.v\($0)", "c.v\($0 + 1)") }
        for _ in benchmark.scaledIterations {
            let store = Store()
            let registry = BindingRegistry(store: store)
            guard orFail(benchmark, { () throws(StoreError) in try store.put("c", model) }) != nil else { return }
            benchmark.startMeasurement()
            do {
                for spec in specs { try registry.bind(spec) }
            } catch {
                benchmark.error("\(error)")
                return
            }
            benchmark.stopMeasurement()
            blackHole(registry)
        }
    }
}
