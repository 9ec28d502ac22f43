import Foundation

/// A throwaway certificate authority and certificates made with `openssl` in a temporary folder:
/// a server certificate for `localhost` and 127.0.0.1, a renewed one (another subject, same names)
/// with its own key, a client certificate, and a key that belongs to none of them.
struct TestCertificates {
    let folder: String
    var caCertificate: String { folder + "/ca.pem" }
    var serverCertificate: String { folder + "/server.pem" }
    var serverKey: String { folder + "/server.key" }
    var renewedCertificate: String { folder + "/renewed.pem" }
    var renewedKey: String { folder + "/renewed.key" }
    var clientCertificate: String { folder + "/client.pem" }
    var clientKey: String { folder + "/client.key" }
    var strayKey: String { folder + "/stray.key" }

    /// The subject of the first server certificate and of the renewed one.
    static let serverSubject = "livebind-test-server"
    static let renewedSubject = "livebind-test-renewed"

    /// Makes the folder and every file; `body` runs with them, then the folder is removed.
    static func with<Result>(_ body: (TestCertificates) throws -> Result) throws -> Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebind-tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let certificates = TestCertificates(folder: folder)
        try certificates.make()
        return try body(certificates)
    }

    private func make() throws {
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        try openssl(
            ["req", "-x509"] + curve + [
                "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
                "-subj", "/CN=LiveBind test CA"
            ])
        try write("server.ext", "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
        try write("client.ext", "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n")
        for (name, subject, ext) in [
            ("server", Self.serverSubject, "server.ext"), ("renewed", Self.renewedSubject, "server.ext"),
            ("client", "livebind-test-client", "client.ext")
        ] {
            try openssl(["req"] + curve + ["-keyout", "\(name).key", "-out", "\(name).csr", "-subj", "/CN=\(subject)"])
            try openssl([
                "x509", "-req", "-in", "\(name).csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", "\(name).pem", "-days", "2", "-extfile", ext
            ])
        }
        try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "stray.key"])
    }

    private func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: folder + "/" + name))
    }

    private func openssl(_ arguments: [String]) throws {
        let result = try ChildProcess.run("/usr/bin/openssl", arguments, in: folder, timeout: 30)
        guard result.status == 0 else {
            throw TestSocketError(description: "openssl \(arguments.joined(separator: " ")) failed: \(result.error)")
        }
    }
}

/// Runs a short-lived program (curl, openssl) to its end, with a time limit past which it is killed by pid.
enum ChildProcess {
    struct Result {
        var status: Int32
        var output: String
        var error: String
    }

    static func run(
        _ executable: String, _ arguments: [String], in directory: String? = nil,
        timeout: Double = 30
    ) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes while it runs, so a chatty child never blocks on a full pipe.
        let outputData = Collected()
        let errorData = Collected()
        let readers = DispatchGroup()
        for (pipe, sink) in [(output, outputData), (error, errorData)] {
            readers.enter()
            Thread.detachNewThread {
                sink.set(pipe.fileHandleForReading.readDataToEndOfFile())
                readers.leave()
            }
        }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        _ = readers.wait(timeout: .now() + 5)
        return Result(
            status: process.terminationStatus, output: String(decoding: outputData.data, as: UTF8.self),
            error: String(decoding: errorData.data, as: UTF8.self))
    }

    /// Bytes handed from a reading thread to the test.
    final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var bytes = Data()
        func set(_ data: Data) { lock.withLock { bytes = data } }
        var data: Data { lock.withLock { bytes } }
    }
}
