import Benchmark
import CSimdjson
import Foundation
import LiveBindEngine

// JSON text of the 1 MiB model (the snapshot benchmark's), encoded and parsed by LiveBind, by
// Foundation's JSONSerialization (what a Swift program reaches for first) and by simdjson (the fastest
// C++ parser there is, as the ceiling). One operation per sample; report.py turns times into MB/s.

/// The snapshot benchmark's model: rows of four members, as many as fit in 1 MiB of text.
func makeMegabyteModel() -> JSON {
    let rowBytes = makeRow(100_000).encoded().count + 1
    return makeRowsModel((1 << 20) / rowBytes)
}

func registerJSONBenchmarks() {
    let model = makeMegabyteModel()
    let text = model.encoded()
    let data = Data(text)

    Benchmark("json/encode/livebind", configuration: largeConfiguration) { benchmark in
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(model.encoded())
        }
        benchmark.stopMeasurement()
    }

    // Parsing is timed until the value is made; it is freed after the clock stops (as a parsed request
    // body or checkpoint lives on in the store). `parse-and-free` times both, for the record.
    Benchmark("json/parse/livebind", configuration: largeConfiguration) { benchmark in
        var kept: [JSON] = []
        kept.reserveCapacity(benchmark.scaledIterations.count)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            do {
                kept.append(try JSON(parsing: text))
            } catch {
                benchmark.error("\(error)")
            }
        }
        benchmark.stopMeasurement()
        blackHole(kept)
    }

    Benchmark("json/parse-and-free/livebind", configuration: largeConfiguration) { benchmark in
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            do {
                blackHole(try JSON(parsing: text))
            } catch {
                benchmark.error("\(error)")
            }
        }
        benchmark.stopMeasurement()
    }

    Benchmark("json/encode/jsonserialization", configuration: largeConfiguration) { benchmark in
        guard let object = try? JSONSerialization.jsonObject(with: data) else {
            benchmark.error("JSONSerialization could not read the model")
            return
        }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try? JSONSerialization.data(withJSONObject: object))
        }
        benchmark.stopMeasurement()
    }

    Benchmark("json/parse/jsonserialization", configuration: largeConfiguration) { benchmark in
        var kept: [Any?] = []
        kept.reserveCapacity(benchmark.scaledIterations.count)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            kept.append(try? JSONSerialization.jsonObject(with: data))
        }
        benchmark.stopMeasurement()
        blackHole(kept)
    }

    // simdjson's DOM parse, walked to the last value, with one parser reused across samples.
    Benchmark("json/parse/simdjson", configuration: largeConfiguration) { benchmark in
        let parser = simdjson_bench_parser_make()
        defer { simdjson_bench_parser_free(parser) }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let values = text.withUnsafeBufferPointer { simdjson_bench_parse(parser, $0.baseAddress, $0.count) }
            if values < 0 { benchmark.error("simdjson could not parse the model") }
            blackHole(values)
        }
        benchmark.stopMeasurement()
    }

    // simdjson has no encoder of its own values; the nearest is writing a parsed DOM back out as text.
    Benchmark("json/encode/simdjson", configuration: largeConfiguration) { benchmark in
        let parser = simdjson_bench_parser_make()
        defer { simdjson_bench_parser_free(parser) }
        let values = text.withUnsafeBufferPointer { simdjson_bench_parse(parser, $0.baseAddress, $0.count) }
        guard values > 0 else {
            benchmark.error("simdjson could not parse the model")
            return
        }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(simdjson_bench_serialize(parser))
        }
        benchmark.stopMeasurement()
    }
}
