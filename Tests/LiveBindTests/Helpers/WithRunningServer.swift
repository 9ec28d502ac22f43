import Foundation
import LiveBind
@testable import LiveBindEngine
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Starts a `LiveBindServer` for `store` in-process on 127.0.0.1 port 0, runs `body` with its port,
/// then stops it.
func withRunningServer<Result>(
    store: Store = Store(),
    configure: (inout LiveBindServer.Configuration) -> Void = { _ in },
    _ body: (Int) throws -> Result
) throws -> Result {
    var configuration = LiveBindServer.Configuration()
    configuration.network.host = "127.0.0.1"
    configuration.network.port = 0
    configure(&configuration)
    var logger = Logger(label: "livebind.test")
    logger.logLevel = .warning
    let server = LiveBindServer(store: store, configuration: configuration, logger: logger)
    try server.start()
    defer { server.stop() }
    return try body(server.port)
}

/// A temporary public directory with an index page, a script, a stylesheet, and a symlink that
/// points outside it; removed when `body` returns.
func withPublicDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
    let base = FileManager.default.temporaryDirectory.appendingPathComponent("livebind-public-\(UUID().uuidString)")
    let publicDirectory = base.appendingPathComponent("public")
    try FileManager.default.createDirectory(at: publicDirectory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: base) }
    try Data("<!doctype html><title>LiveBind</title>".utf8).write(to: publicDirectory.appendingPathComponent("index.html"))
    try Data("console.log(1)".utf8).write(to: publicDirectory.appendingPathComponent("app.js"))
    try Data("body{}".utf8).write(to: publicDirectory.appendingPathComponent("style.css"))
    try Data("secret".utf8).write(to: base.appendingPathComponent("secret.txt"))
    try FileManager.default.createSymbolicLink(
        atPath: publicDirectory.appendingPathComponent("escape.txt").path,
        withDestinationPath: base.appendingPathComponent("secret.txt").path)
    return try body(publicDirectory.path)
}

/// Raises this process's open-file limit so a test can hold thousands of sockets; past the hard
/// limit only where that is allowed (as root). Returns the soft limit now in force.
@discardableResult
func raiseFileLimit(to wanted: Int) -> Int {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
    guard limit.rlim_cur < rlim_t(wanted) else { return Int(limit.rlim_cur) }
    if limit.rlim_max < rlim_t(wanted) {
        var raised = limit
        raised.rlim_cur = rlim_t(wanted)
        raised.rlim_max = rlim_t(wanted)
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return wanted }
    }
    limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    return Int(limit.rlim_cur)
}
