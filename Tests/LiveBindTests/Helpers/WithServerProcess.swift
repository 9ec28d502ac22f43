import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Runs the built `livebind-server` executable (from the same build folder as the tests) on port 0
/// with `arguments`, runs `body` with the port it reports, then stops it with SIGTERM (SIGKILL if it
/// has not exited within 10 s).
///
/// For tests that need more sockets than one process may hold: the server's sockets count against
/// its own open-file limit, not the test's.
func withServerProcess<Result>(_ arguments: [String], _ body: (Int) throws -> Result) throws -> Result {
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        .deletingLastPathComponent().appendingPathComponent("livebind-server")
    guard FileManager.default.isExecutableFile(atPath: executable.path) else {
        throw TestSocketError(description: "\(executable.path) is missing: build it with `swift build --build-tests`")
    }
    let process = Process()
    process.executableURL = executable
    process.arguments = ["--host", "127.0.0.1", "--port", "0"] + arguments
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    let log = Mutex("")
    errors.fileHandleForReading.readabilityHandler = { handle in
        let text = String(decoding: handle.availableData, as: UTF8.self)
        log.withLock { $0 += text }
    }
    try process.run()
    defer {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        let end = ContinuousClock.now + .seconds(10)
        while process.isRunning && ContinuousClock.now < end { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        errors.fileHandleForReading.readabilityHandler = nil
    }
    var port: Int?
    let end = ContinuousClock.now + .seconds(30)
    while port == nil && process.isRunning && ContinuousClock.now < end {
        port = log.withLock { text in
            guard let range = text.range(of: "listening on http://127.0.0.1:") else { return nil }
            return Int(text[range.upperBound...].prefix { $0.isNumber })
        }
        if port == nil { usleep(20_000) }
    }
    guard let port else {
        throw TestSocketError(description: "livebind-server did not report its port: \(log.withLock { $0 })")
    }
    return try body(port)
}
