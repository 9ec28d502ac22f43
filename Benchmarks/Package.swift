// swift-tools-version: 6.1
// Benchmarks for LiveBind: a package of its own so that the library keeps its small dependency list.
// Run with `bash Benchmarks/run.sh` from the repository root (or `make bench`).
import PackageDescription

let package = Package(
    name: "LiveBindBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "LiveBind", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0")  // `Deque`, for JSON arrays
    ],
    targets: [
        .executableTarget(
            name: "EngineBenchmarks",
            dependencies: [
                .product(name: "LiveBindEngine", package: "LiveBind"),
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "OpenCombine", package: "OpenCombine"),
                .product(name: "DequeModule", package: "swift-collections"),
                "CSimdjson"
            ],
            path: "Benchmarks/EngineBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Debian's simdjson behind a few C functions: the JSON benchmarks' ceiling reference
        // (`apt-get install libsimdjson-dev`; run.sh installs it when missing).
        .target(
            name: "CSimdjson",
            path: "Benchmarks/CSimdjson",
            linkerSettings: [.linkedLibrary("simdjson")]
        ),
        // A plain loop over one engine operation, for valgrind/perf (see BENCHMARKS.md).
        .executableTarget(
            name: "EngineProfile",
            dependencies: [
                "CHeap",
                .product(name: "LiveBindEngine", package: "LiveBind"),
                .product(name: "DequeModule", package: "swift-collections")
            ],
            path: "Benchmarks/EngineProfile",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // glibc's count of the heap's bytes (mallinfo2), for EngineProfile's memory mode.
        .target(name: "CHeap", path: "Benchmarks/CHeap")
    ],
    cxxLanguageStandard: .cxx17
)
