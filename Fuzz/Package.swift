// swift-tools-version: 6.0
// libFuzzer targets for LiveBind's parsers and patch application. Built by `Tests/fuzz/run.sh`
// (`make fuzz`) with `-sanitize=fuzzer,address`; a package of its own so the library's build stays plain.
import PackageDescription

let package = Package(
    name: "LiveBindFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "LiveBind", path: "..")],
    targets: [
        .target(name: "FuzzDriver"),
        .executableTarget(name: "FuzzJSON", dependencies: ["FuzzDriver", .product(name: "LiveBind", package: "LiveBind")]),
        .executableTarget(name: "FuzzPath", dependencies: ["FuzzDriver", .product(name: "LiveBind", package: "LiveBind")]),
        .executableTarget(name: "FuzzPatch", dependencies: ["FuzzDriver", .product(name: "LiveBind", package: "LiveBind")]),
        .executableTarget(name: "FuzzForm", dependencies: ["FuzzDriver", .product(name: "LiveBind", package: "LiveBind")]),
    ],
    swiftLanguageModes: [.v6]
)
