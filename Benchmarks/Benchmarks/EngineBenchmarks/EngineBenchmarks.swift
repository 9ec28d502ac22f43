import Benchmark

/// Scalar operations: 1,000 operations per sample, reported per operation.
var scalarConfiguration: Benchmark.Configuration {
    .init(
        metrics: [.wallClock, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 20,
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 2_000
    )
}

/// Array operations: 1,000 operations per sample, fewer samples (each sample sets up a long array).
var arrayConfiguration: Benchmark.Configuration {
    .init(
        metrics: [.wallClock, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 1,
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 60
    )
}

/// Large operations (milliseconds each): one operation per sample.
var largeConfiguration: Benchmark.Configuration {
    .init(
        metrics: [.wallClock, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 3,
        scalingFactor: .one,
        maxDuration: .seconds(2),
        maxIterations: 200
    )
}

let benchmarks: @Sendable () -> Void = {
    registerBaselineBenchmarks()
    registerStoreBenchmarks()
    registerPatchBenchmarks()
    registerBindingBenchmarks()
    registerJSONBenchmarks()
    registerViewBenchmarks()
}
