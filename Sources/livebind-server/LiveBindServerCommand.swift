import Dispatch
import LiveBind
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `livebind-server`: serves models over HTTP with live updates as Server-Sent Events. Its options are
/// the server's settings (`LiveBindServer.Configuration.settings`, `ClusterConfiguration.settings`) and
/// its own (``CommandOptions``), read by ``CommandLine``.
@main
enum LiveBindServerCommand {
    static func main() {
        ShutdownSignals.hold()
        let parsed: CommandLine.Parsed
        do {
            parsed = try CommandLine.parse(Array(Swift.CommandLine.arguments.dropFirst()))
        } catch {
            CommandLine.fail(error.description)
        }
        switch parsed {
        case .help: print(CommandLine.help, terminator: "")
        case .version: print(LiveBindVersion.string)
        case .run(var configuration, let options):
            do { try run(&configuration, options) } catch { CommandLine.fail("\(error)", usage: false) }
        }
    }

    static func run(_ configuration: inout LiveBindServer.Configuration, _ options: CommandOptions) throws {
        signal(SIGPIPE, SIG_IGN)
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let logger = Logger(label: "livebind")
        // From here SIGINT and SIGTERM end the process: at once while it starts, through `stop` once it runs.
        let stop = Mutex<(@Sendable () -> Void)?>(nil)
        ShutdownSignals.install(logger: logger) {
            stop.withLock { $0 }?()
            Glibc.exit(0)
        }
        if configuration.network.publicDirectory == nil { configuration.network.builtinFiles = BuiltinPublic.files() }
        configuration.access.policy = try TokensFile.policy(
            tokens: options.tokens, file: options.tokensFile,
            privateReads: options.privateReads,
            allowedOrigins: options.allowedOrigins)
        if let jwtKey = options.jwtKey {
            guard let key = ConfigFile.readAll(jwtKey) else {
                throw ConfigFile.Failure(description: "cannot read --jwt-key file '\(jwtKey)'")
            }
            configuration.access.policy.jwt = AccessPolicy.JWT(
                key: key, audience: options.jwtAudience, issuer: options.jwtIssuer,
                leewaySeconds: options.jwtLeeway)
        }
        FileLimit.fitStreams(&configuration, logger: logger)

        let server = try LiveBindServer(configuration: configuration, logger: logger)
        // Definition files and the demo create their models only when the data directory lacks them.
        let app = try Application(registry: server.bindings, configFile: options.config, logger: logger)
        if options.runsDemo { app.startDemo() }
        try server.start()
        let host = configuration.network.host
        let shown = host == "0.0.0.0" || host == "::" ? "127.0.0.1" : host.contains(":") ? "[\(host)]" : host
        logger.info("Open \(server.usesTLS ? "https" : "http")://\(shown):\(server.port)/ for the dashboard (Ctrl-C stops)")
        if server.usesTLS { CertificateReloadSignal.install(server: server, logger: logger) }
        stop.withLock {
            $0 = {
                app.stop()
                server.stop()
            }
        }
        dispatchMain()
    }
}
