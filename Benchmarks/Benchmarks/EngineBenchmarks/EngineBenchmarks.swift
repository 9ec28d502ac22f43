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

let benchmarks: @Sendable () -> Void = {
    registerBaselineBenchmarks()
}
