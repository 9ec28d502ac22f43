import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The real `livebind-server` executable run as a child process, its standard error collected.
///
/// The binary is `$LIVEBIND_SERVER`, else the one next to the test bundle, else `.build/debug/`
/// (build it first: `swift build`). Only this process is ever signalled, by its pid.
final class ServerProcess {
    let process: Process
    private let output = LogBuffer()

    /// Text appended by the reading thread and read by the test (an `NSLock`, which the thread
    /// sanitizer sees).
    final class LogBuffer: @unchecked Sendable {
        private let lock = NSLock()
        private var contents = ""

        func append(_ text: String) { lock.withLock { contents += text } }
        var text: String { lock.withLock { contents } }

        /// Appends what `pipe` carries, on a thread of its own, until the writer closes it.
        func collect(from pipe: Pipe) {
            let handle = pipe.fileHandleForReading
            Thread.detachNewThread { [self] in
                while true {
                    let data = handle.availableData
                    if data.isEmpty { return }
                    append(String(decoding: data, as: UTF8.self))
                }
            }
        }
    }

    /// The executable the tests run.
    static func binaryPath() throws -> String {
        var candidates: [String] = []
        if let path = ProcessInfo.processInfo.environment["LIVEBIND_SERVER"] { candidates.append(path) }
        let bundleDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        candidates.append(bundleDirectory.appendingPathComponent("livebind-server").path)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/livebind-server").path)
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw TestSocketError(description: "livebind-server not built (looked at \(candidates)); run `swift build` first")
        }
        return found
    }

    /// Starts `livebind-server` with `arguments` (port 0 on 127.0.0.1 unless given).
    init(_ arguments: [String]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.binaryPath())
        process.arguments = ["--host", "127.0.0.1", "--port", "0"] + arguments
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = pipe
        try process.run()
        output.collect(from: pipe)
    }

    /// Everything the process wrote so far.
    var log: String { output.text }

    /// The port from the "listening on" line; throws when the process exits or `timeout` passes first.
    func waitForPort(timeout: Double = 20) throws -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let range = log.range(of: #"listening on http://127\.0\.0\.1:[0-9]+/"#, options: .regularExpression) {
                let text = log[range].dropFirst("listening on http://127.0.0.1:".count).dropLast()
                if let port = Int(text) { return port }
            }
            if !process.isRunning { throw TestSocketError(description: "server exited: \(log)") }
            usleep(20_000)
        }
        throw TestSocketError(description: "server did not start in \(timeout) s: \(log)")
    }

    /// Waits for the process to exit and returns its status; throws after `timeout`.
    @discardableResult
    func waitForExit(timeout: Double = 20) throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            guard Date() < deadline else { throw TestSocketError(description: "server still running after \(timeout) s") }
            usleep(20_000)
        }
        return process.terminationStatus
    }

    /// SIGKILL: no shutdown code runs, as in a crash or power cut of the process.
    func kill() throws {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        try waitForExit()
    }

    /// SIGTERM: a clean shutdown.
    func terminate() throws {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGTERM) }
        try waitForExit()
    }

    deinit {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    }
}

/// A fresh temporary directory, removed when `body` returns.
func withTemporaryDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("livebind-data-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory.path)
}
