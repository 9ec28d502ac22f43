// swift-tools-version: 6.0
import PackageDescription

// `LIVEBIND_SANITIZE=thread` (or `address`) instruments LiveBind's library and executable targets only
// (make test-tsan, test-asan): the dependencies stay as the plain build made them, in the same .build,
// and the tests are linked with the sanitizer's runtime but not instrumented, so a sanitizer run
// recompiles those targets and nothing else (the test target's 120 files are compiled once).
let sanitizer = Context.environment["LIVEBIND_SANITIZE"].flatMap { $0.isEmpty ? nil : $0 }
let sanitized: [SwiftSetting] = sanitizer.map { [.unsafeFlags(["-sanitize=\($0)"])] } ?? []
let sanitizedLink: [LinkerSetting] = sanitizer.map { [.unsafeFlags(["-sanitize=\($0)"])] } ?? []

let package = Package(
    name: "LiveBind",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "LiveBind", targets: ["LiveBind"]),
        .library(name: "LiveBindEngine", targets: ["LiveBindEngine"]),
        .library(name: "LiveBindClient", targets: ["LiveBindClient"]),
        .executable(name: "livebind-mirror", targets: ["livebind-mirror"]),
        .executable(name: "livebind-server", targets: ["livebind-server"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        // JWT verification (--jwt-key): signatures, keys and claims are checked by jwt-kit, never here.
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        // jwt-kit's own; LiveBind keys cookie sessions by the SHA-256 of their id.
        .package(url: "https://github.com/apple/swift-crypto", "4.1.0"..<"6.0.0")
    ],
    targets: [
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        .systemLibrary(
            name: "CGnuTLS",
            pkgConfig: "gnutls",
            providers: [.apt(["libgnutls28-dev"])]
        ),
        // The Swift client's HTTP and event streams (LiveBindClient only). Foundation's URLSession on
        // Linux spins a core while a response streams; async-http-client cost SwiftNIO and a second
        // BoringSSL, 505 CPU-seconds of every cold debug build.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CNATS",
            pkgConfig: "libnats",
            providers: [.apt(["libnats-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // The engine alone: models, observation, bindings, views. No C library, no HTTP: the client
        // (LiveBindClient) mirrors into its Store on any platform. `package` declarations are what
        // the server and the client use of it beyond the public API.
        .target(
            name: "LiveBindEngine",
            dependencies: [
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections")
            ],
            swiftSettings: sanitized
        ),
        // A client of a LiveBind server that mirrors its models into a local Store: the engine and
        // libcurl (no libmicrohttpd, SQLite or NATS), so it builds for Apple platforms too.
        .target(
            name: "LiveBindClient",
            dependencies: [
                "LiveBindEngine",
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
                "CCurl"
            ],
            swiftSettings: sanitized
        ),
        // The client on the command line: prints a mirror's documents as they change, or takes
        // commands on standard input (what the conformance tests drive).
        .executableTarget(
            name: "livebind-mirror",
            dependencies: ["LiveBindClient", .product(name: "DequeModule", package: "swift-collections")],
            swiftSettings: sanitized,
            linkerSettings: sanitizedLink
        ),
        // The server's HTTP layer: libmicrohttpd, the HTTP types, problems and request counters; nothing of the server above it.
        .target(
            name: "LiveBindHTTP",
            dependencies: [
                "LiveBindEngine",
                "CMicroHTTPD",
                "CGnuTLS",
                .product(name: "Logging", package: "swift-log")
            ],
            swiftSettings: sanitized
        ),
        .target(
            name: "LiveBind",
            dependencies: [
                "LiveBindEngine",
                "LiveBindHTTP",
                "CSQLite",
                "CNATS",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto")
            ],
            swiftSettings: sanitized
        ),
        .executableTarget(
            name: "livebind-server",
            dependencies: [
                "LiveBind",
                .product(name: "Logging", package: "swift-log")
            ],
            swiftSettings: sanitized,
            linkerSettings: sanitizedLink,
            plugins: ["EmbedPublic"]
        ),
        // Build-time only: turns Public/ into a Swift file of the executable (see Plugins/EmbedPublic).
        .executableTarget(name: "embed-public"),
        .plugin(name: "EmbedPublic", capability: .buildTool(), dependencies: ["embed-public"]),
        .testTarget(
            name: "LiveBindTests",
            dependencies: ["LiveBind", "LiveBindEngine", "LiveBindHTTP", "LiveBindClient", .product(name: "JWTKit", package: "jwt-kit")],
            resources: [.copy("Fixtures")],
            // Linked with the sanitizer's runtime but not instrumented: the tests' own code is the same
            // in all three builds, so a sanitizer run recompiles only the library targets.
            linkerSettings: sanitizedLink
        )
    ],
    swiftLanguageModes: [.v6]
)
