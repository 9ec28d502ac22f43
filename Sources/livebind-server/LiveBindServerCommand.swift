import ArgumentParser
import Dispatch
import LiveBind
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// `livebind-server`: serves models over HTTP with live updates as Server-Sent Events.
@main
struct LiveBindServerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "livebind-server",
        abstract: "Serve live JSON models over HTTP, with changes streamed as Server-Sent Events.")

    @Option(help: "Address to listen on (numeric IPv4/IPv6, or localhost).")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one).")
    var port = 8080

    @Option(help: "Folder with the dashboard (index.html) served at /.")
    var `public`: String?

    mutating func run() throws {
        signal(SIGPIPE, SIG_IGN)
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let logger = Logger(label: "livebind")
        var configuration = LiveBindServer.Configuration()
        configuration.host = host
        configuration.port = port
        configuration.publicDirectory = `public`
        FileLimit.raise(toAtLeast: configuration.maxStreams + 1024, logger: logger)

        let server = LiveBindServer(store: Store(), configuration: configuration, logger: logger)
        do {
            try server.start()
        } catch {
            throw ValidationError("\(error)")
        }
        logger.info("Open http://\(displayHost):\(server.port)/ for the dashboard (Ctrl-C stops)")
        ShutdownSignals.install(logger: logger) {
            server.stop()
            Glibc.exit(0)
        }
        dispatchMain()
    }

    private var displayHost: String {
        switch host {
        case "0.0.0.0", "::": "127.0.0.1"
        case _ where host.contains(":"): "[\(host)]"
        default: host
        }
    }
}
