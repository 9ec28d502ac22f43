import Foundation
import Logging
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// HTTPS served by libmicrohttpd's GnuTLS: reads, writes, static files and event streams over TLS,
/// `Strict-Transport-Security`, start-up errors for bad certificate files, and certificate reload.
@Suite("TLS") struct TLSTests {
    static func tls(_ certificates: TestCertificates) -> (inout LiveBindServer.Configuration) -> Void {
        { configuration in
            configuration.network.tlsCertificateFile = certificates.serverCertificate
            configuration.network.tlsKeyFile = certificates.serverKey
        }
    }

    @Test func readsWritesAndStaticFilesGoOverHTTPSWithStrictTransportSecurity() throws {
        try TestCertificates.with { certificates in
            try withPublicDirectory { publicDirectory in
                let store = Store()
                try store.put("sensor", ["temperature": 20.5])
                try withRunningServer(
                    store: store,
                    configure: { configuration in
                        Self.tls(certificates)(&configuration)
                        configuration.network.publicDirectory = publicDirectory
                    }
                ) { port in
                    let curl = TestCurl(certificates: certificates, port: port)
                    let read = try curl.request("/models/sensor")
                    #expect(read.status == 0, "\(read.error)")
                    #expect(TestCurl.status(read.output) == 200)
                    #expect(TestCurl.header(read.output, "Strict-Transport-Security") == "max-age=31536000")
                    #expect(read.output.hasSuffix(#"{"temperature":20.5}"#))

                    let write = try curl.request("/models/sensor", ["-d", "temperature=26.5"])
                    #expect(TestCurl.status(write.output) == 200)
                    #expect(TestCurl.header(write.output, "Strict-Transport-Security") != nil)
                    #expect(try store.value(of: "sensor", at: Path(dotted: "temperature")) == 26.5)

                    let page = try curl.request("/")
                    #expect(TestCurl.status(page.output) == 200)
                    #expect(page.output.contains("<title>LiveBind</title>"))
                    #expect(TestCurl.header(page.output, "Strict-Transport-Security") != nil)

                    // A problem answer is an answer too.
                    let missing = try curl.request("/models/nothing")
                    #expect(TestCurl.status(missing.output) == 404)
                    #expect(TestCurl.header(missing.output, "Strict-Transport-Security") != nil)
                }
            }
        }
    }

    @Test func plainHTTPAnswersCarryNoStrictTransportSecurity() throws {
        try withRunningServer { port in
            let response = try TestHTTPClient.request(port: port, "GET", "/healthz")
            #expect(response.status == 200)
            #expect(response.header("Strict-Transport-Security") == nil)
        }
    }

    @Test func aStreamOverTLSGetsHeartbeatsAndEventsIntact() throws {
        try TestCertificates.with { certificates in
            let store = Store()
            try store.put("sensor", ["temperature": 20.5])
            try withRunningServer(
                store: store,
                configure: { configuration in
                    Self.tls(certificates)(&configuration)
                    configuration.streams.heartbeat = .milliseconds(400)
                }
            ) { port in
                let curl = TestCurl(certificates: certificates, port: port)
                let stream = try TestCurlStream(curl, "/events?model=sensor")
                defer { stream.stop() }
                try stream.wait(for: "event: snapshot")
                // Idle: heartbeats arrive, through TLS (the direct socket path would garble the records).
                try stream.wait(for: ": heartbeat", count: 2)
                try store.set(21.5, at: Path(dotted: "temperature"), in: "sensor")
                try stream.wait(for: #""path":"/temperature","value":21.5"#)
                try stream.wait(for: ": heartbeat", count: 3)
                try store.set(22.5, at: Path(dotted: "temperature"), in: "sensor")
                try stream.wait(for: #""value":22.5"#)
                #expect(stream.process.isRunning, "the stream is still open: \(stream.text)")
                let metrics = try curl.request("/metrics")
                #expect(metrics.output.contains("livebind_heartbeats_direct_total 0"))
                #expect(!metrics.output.contains("livebind_heartbeats_total 0\n"))
            }
        }
    }

    @Test func aReloadServesTheNewCertificateAndKeepsOpenStreams() throws {
        try TestCertificates.with { certificates in
            let store = Store()
            try store.put("sensor", ["temperature": 20.5])
            let certificate = certificates.folder + "/live.pem"
            let key = certificates.folder + "/live.key"
            try FileManager.default.copyItem(atPath: certificates.serverCertificate, toPath: certificate)
            try FileManager.default.copyItem(atPath: certificates.serverKey, toPath: key)
            var configuration = LiveBindServer.Configuration()
            configuration.network.port = 0
            configuration.network.tlsCertificateFile = certificate
            configuration.network.tlsKeyFile = key
            var logger = Logger(label: "livebind.test")
            logger.logLevel = .warning
            let server = LiveBindServer(store: store, configuration: configuration, logger: logger)
            try server.start()
            defer { server.stop() }
            let curl = TestCurl(certificates: certificates, port: server.port)
            let stream = try TestCurlStream(curl, "/events?model=sensor")
            defer { stream.stop() }
            try stream.wait(for: "event: snapshot")
            #expect(
                stream.text.contains("CN=\(TestCertificates.serverSubject)")
                    || stream.text.contains("CN = \(TestCertificates.serverSubject)"))

            // A renewal: new files in place, then the reload (SIGHUP in the executable).
            try FileManager.default.removeItem(atPath: certificate)
            try FileManager.default.removeItem(atPath: key)
            try FileManager.default.copyItem(atPath: certificates.renewedCertificate, toPath: certificate)
            try FileManager.default.copyItem(atPath: certificates.renewedKey, toPath: key)
            try server.reloadCertificate()

            let fresh = try curl.request("/healthz", ["-v"])
            #expect(TestCurl.status(fresh.output) == 200)
            #expect(fresh.error.contains(TestCertificates.renewedSubject), "\(fresh.error)")
            // The stream opened before goes on, with its own session.
            try store.set(23.5, at: Path(dotted: "temperature"), in: "sensor")
            try stream.wait(for: #""value":23.5"#)

            // Files that do not fit together: the reload fails and the renewed certificate stays.
            try FileManager.default.removeItem(atPath: key)
            try FileManager.default.copyItem(atPath: certificates.strayKey, toPath: key)
            #expect(throws: ServerError.tlsKeyMismatch(certificate: certificate, key: key)) { try server.reloadCertificate() }
            let after = try curl.request("/healthz", ["-v"])
            #expect(TestCurl.status(after.output) == 200)
            #expect(after.error.contains(TestCertificates.renewedSubject))
        }
    }

    @Test func aServerWithoutTLSHasNothingToReload() throws {
        var configuration = LiveBindServer.Configuration()
        configuration.network.port = 0
        var logger = Logger(label: "livebind.test")
        logger.logLevel = .warning
        let server = LiveBindServer(store: Store(), configuration: configuration, logger: logger)
        try server.start()
        defer { server.stop() }
        #expect(throws: ServerError.tlsNotRunning) { try server.reloadCertificate() }
    }

    @Test func badCertificateFilesStopTheStartWithTheirReason() throws {
        try TestCertificates.with { certificates in
            let garbage = certificates.folder + "/garbage.pem"
            try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: garbage))
            let missing = certificates.folder + "/missing.pem"
            var cases: [(String?, String?, ServerError)] = [
                (missing, certificates.serverKey, .tlsFileUnreadable(path: missing, reason: "no such file")),
                (certificates.serverCertificate, missing, .tlsFileUnreadable(path: missing, reason: "no such file")),
                (certificates.folder, certificates.serverKey, .tlsFileUnreadable(path: certificates.folder, reason: "it is a directory")),
                (
                    certificates.serverCertificate, certificates.strayKey,
                    .tlsKeyMismatch(certificate: certificates.serverCertificate, key: certificates.strayKey)
                ),
                (certificates.serverCertificate, nil, .tlsIncomplete),
                (nil, certificates.serverKey, .tlsIncomplete)
            ]
            if getuid() != 0 {  // root reads any file: the case exists only for other users
                let locked = certificates.folder + "/locked.key"
                try FileManager.default.copyItem(atPath: certificates.serverKey, toPath: locked)
                chmod(locked, 0)
                cases.append((certificates.serverCertificate, locked, .tlsFileUnreadable(path: locked, reason: "permission denied")))
            }
            for (certificate, key, expected) in cases {
                var configuration = LiveBindServer.Configuration()
                configuration.network.port = 0
                configuration.network.tlsCertificateFile = certificate
                configuration.network.tlsKeyFile = key
                let server = LiveBindServer(store: Store(), configuration: configuration)
                #expect(throws: expected) { try server.start() }
                #expect(server.port == 0)
            }
            // Unparseable contents: the error names the file and says what GnuTLS found.
            for (certificate, key, isCertificate) in [
                (garbage, certificates.serverKey, true),
                (certificates.serverCertificate, garbage, false),
                (certificates.serverKey, certificates.serverKey, true)
            ] {
                var configuration = LiveBindServer.Configuration()
                configuration.network.port = 0
                configuration.network.tlsCertificateFile = certificate
                configuration.network.tlsKeyFile = key
                do throws(ServerError) {
                    try LiveBindServer(store: Store(), configuration: configuration).start()
                    Issue.record("started with \(certificate) and \(key)")
                } catch {
                    switch error {
                    case .tlsInvalidCertificate(let path, _): #expect(isCertificate && path == certificate)
                    case .tlsInvalidKey(let path, _): #expect(!isCertificate && path == key)
                    default: Issue.record("unexpected \(error)")
                    }
                    #expect(error.description.contains(isCertificate ? certificate : key))
                }
            }
        }
    }

    @Test func theExecutableSaysWhyItCannotStartTLS() throws {
        try TestCertificates.with { certificates in
            let cases: [([String], String)] = [
                (
                    ["--tls-cert", certificates.serverCertificate, "--tls-key", certificates.strayKey],
                    "does not belong to the certificate"
                ),
                (
                    ["--tls-cert", certificates.folder + "/nope.pem", "--tls-key", certificates.serverKey],
                    "cannot read '\(certificates.folder)/nope.pem': no such file"
                ),
                (["--tls-cert", certificates.serverCertificate], "TLS needs both a certificate and its key")
            ]
            for (arguments, message) in cases {
                let server = try ServerProcess(["--no-demo"] + arguments)
                let status = try server.waitForExit()
                #expect(status != 0)
                #expect(server.log.contains(message), "\(server.log)")
            }
        }
    }

    @Test func writesOverTLSAcceptOnlyTheHTTPSOrigin() throws {
        try TestCertificates.with { certificates in
            let store = Store()
            try store.put("sensor", ["temperature": 20.5])
            try withRunningServer(store: store, configure: Self.tls(certificates)) { port in
                let curl = TestCurl(certificates: certificates, port: port)
                let own = try curl.request("/models/sensor", ["-d", "temperature=1", "-H", "Origin: https://127.0.0.1:\(port)"])
                #expect(TestCurl.status(own.output) == 200)
                let plain = try curl.request("/models/sensor", ["-d", "temperature=2", "-H", "Origin: http://127.0.0.1:\(port)"])
                #expect(TestCurl.status(plain.output) == 403)
                #expect(TestCurl.header(plain.output, "Content-Type") == "application/problem+json")
                #expect(try store.value(of: "sensor", at: Path(dotted: "temperature")) == 1)
            }
        }
    }
}
