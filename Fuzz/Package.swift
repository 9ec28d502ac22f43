// swift-tools-version: 6.0
// libFuzzer targets for LiveBind's parsers and grammars (JSON, paths, patches, forms, bearer tokens, cookies,
// binding entries, `sub=` values, windows and views, tokens and config files, `Last-Event-ID`, `If-Match`, the history's times and durations, the event stream the Swift client reads and its targets), patch
// application and sequences of store writes. Built by `Tests/fuzz/run.sh` (`make fuzz`) with
// `-sanitize=fuzzer,address`; a package of its own so the library's build stays plain.
import PackageDescription

let package = Package(
    name: "LiveBindFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "LiveBind", path: ".."),
        // The library's own dependency, for building JSON arrays and objects from generated parts.
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0")
    ],
    targets: [
        .target(name: "FuzzDriver"),
        .executableTarget(name: "FuzzJSON", dependencies: ["FuzzDriver", .product(name: "LiveBind", package: "LiveBind")]),
        .executableTarget(name: "FuzzPath", dependencies: ["FuzzDriver", .product(name: "LiveBind", package: "LiveBind")]),
        .executableTarget(name: "FuzzPatch", dependencies: ["FuzzDriver", .product(name: "LiveBind", package: "LiveBind")]),
        .executableTarget(name: "FuzzBearer", dependencies: ["FuzzDriver", .product(name: "LiveBind", package: "LiveBind")]),
        .executableTarget(name: "FuzzCookie", dependencies: ["FuzzDriver", .product(name: "LiveBind", package: "LiveBind")]),
        .executableTarget(name: "FuzzForm", dependencies: ["FuzzDriver", .product(name: "LiveBind", package: "LiveBind")]),
        .executableTarget(
            name: "FuzzBindingSpec",
            dependencies: [
                "FuzzDriver", .product(name: "LiveBind", package: "LiveBind"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections")
            ]),
        .executableTarget(name: "FuzzSubscription", dependencies: ["FuzzDriver", .product(name: "LiveBind", package: "LiveBind")]),
        .executableTarget(
            name: "FuzzConfig",
            dependencies: [
                "FuzzDriver", .product(name: "LiveBind", package: "LiveBind"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections")
            ]),
        .executableTarget(
            name: "FuzzView",
            dependencies: [
                "FuzzDriver", .product(name: "LiveBind", package: "LiveBind"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections")
            ]),
        .executableTarget(name: "FuzzHeaders", dependencies: ["FuzzDriver", .product(name: "LiveBind", package: "LiveBind")]),
        .executableTarget(name: "FuzzHistoryQuery", dependencies: ["FuzzDriver", .product(name: "LiveBind", package: "LiveBind")]),
        .executableTarget(name: "FuzzClient", dependencies: ["FuzzDriver", .product(name: "LiveBindClient", package: "LiveBind")]),
        .executableTarget(
            name: "FuzzStoreSequence",
            dependencies: [
                "FuzzDriver", .product(name: "LiveBind", package: "LiveBind"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections")
            ])
    ],
    swiftLanguageModes: [.v6]
)
