// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "LiveBind",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "LiveBind", targets: ["LiveBind"]),
        .executable(name: "livebind-server", targets: ["livebind-server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
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
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(
            name: "LiveBind",
            dependencies: [
                "CMicroHTTPD",
                "CGnuTLS",
                "CSQLite",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Collections", package: "swift-collections"),
            ]
        ),
        .executableTarget(
            name: "livebind-server",
            dependencies: [
                "LiveBind",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            plugins: ["EmbedPublic"]
        ),
        // Build-time only: turns Public/ into a Swift file of the executable (see Plugins/EmbedPublic).
        .executableTarget(name: "embed-public"),
        .plugin(name: "EmbedPublic", capability: .buildTool(), dependencies: ["embed-public"]),
        .testTarget(
            name: "LiveBindTests",
            dependencies: ["LiveBind"],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
