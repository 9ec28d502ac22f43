import Foundation

/// curl (Debian's, built with OpenSSL) as an HTTPS client that trusts only the test CA.
struct TestCurl {
    let certificates: TestCertificates
    let port: Int

    /// The URL of `target` on the test server.
    func url(_ target: String) -> String { "https://127.0.0.1:\(port)\(target)" }

    /// One request; `-i` puts the status line and headers before the body in `output`.
    func request(_ target: String, _ extra: [String] = [], timeout: Double = 20) throws -> ChildProcess.Result {
        try ChildProcess.run(
            "/usr/bin/curl",
            [
                "-sS", "-i", "--max-time", "\(Int(timeout))", "--cacert",
                certificates.caCertificate
            ] + extra + [url(target)], timeout: timeout + 5)
    }

    /// The status code of the last response in `output`, or nil.
    static func status(_ output: String) -> Int? {
        output.split(separator: "\r\n").last { $0.hasPrefix("HTTP/") }.flatMap { Int($0.split(separator: " ")[1]) }
    }

    /// Whether `output`'s headers hold `name: value` (names compared without case).
    static func header(_ output: String, _ name: String) -> String? {
        let head = output.components(separatedBy: "\r\n\r\n").first ?? ""
        for line in head.split(separator: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name.lowercased() { return parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }
}

/// An event stream read by a curl child process over HTTPS; its output is collected as it arrives.
final class TestCurlStream {
    let process = Process()
    private let collected = ServerProcess.LogBuffer()

    /// Opens `target` with curl -N; stops by itself after `seconds`.
    init(_ curl: TestCurl, _ target: String, seconds: Int = 30) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = [
            "-sS", "-N", "-v", "--max-time", "\(seconds)", "--cacert", curl.certificates.caCertificate,
            curl.url(target)
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        collected.collect(from: pipe)
    }

    /// Everything curl wrote so far (its -v lines and the stream).
    var text: String { collected.text }

    /// Waits until `text` holds `needle` `count` times; throws after `timeout`.
    func wait(for needle: String, count: Int = 1, timeout: Double = 15) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if text.components(separatedBy: needle).count - 1 >= count { return }
            if !process.isRunning { break }
            usleep(20_000)
        }
        throw TestSocketError(description: "stream did not show \(count)× \(needle): \(text)")
    }

    /// Stops curl by its pid.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }
}
