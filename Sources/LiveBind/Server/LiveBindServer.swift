import Logging
import Synchronization

/// Serves models over HTTP and their changes as Server-Sent Events, on libmicrohttpd.
///
/// ```swift
/// let server = LiveBindServer(configuration: .init())
/// try server.start()
/// print(server.port)
/// server.stop()
/// ```
public final class LiveBindServer: Sendable {
    /// The configuration the server was made with.
    public let configuration: Configuration
    let logger: Logger
    private let daemon: Mutex<MicroHTTPDDaemon?> = Mutex(nil)

    /// Makes a stopped server.
    public init(configuration: Configuration = Configuration(), logger: Logger = Logger(label: "livebind.server")) {
        self.configuration = configuration
        self.logger = logger
    }

    /// The bound port while running (the real one when configured with port 0), else 0.
    public var port: Int { Int(daemon.withLock { $0?.port } ?? 0) }

    /// Binds and starts serving. Throws when the address is invalid or taken.
    public func start() throws(ServerError) {
        let router = try makeRouter()
        let options = MicroHTTPDDaemon.Options(
            host: configuration.host, port: UInt16(clamping: configuration.port),
            connectionLimit: configuration.effectiveConnectionLimit,
            connectionMemoryLimit: configuration.connectionMemoryLimit,
            connectionTimeoutSeconds: configuration.connectionTimeout,
            threadPoolSize: configuration.threadPoolSize,
            sendBufferSize: configuration.sendBufferSize, bodyLimit: configuration.bodyLimit)
        let handlers = MicroHTTPDDaemon.Handlers(
            respond: { request in
                do { return try router.route(request) } catch { return Problem.from(error).response }
            },
            reject: { _, failure in Problem.from(failure).response })
        let made = MicroHTTPDDaemon(options: options, handlers: handlers, logger: logger)
        let alreadyRunning = daemon.withLock { current in
            if current != nil { return true }
            current = made
            return false
        }
        if alreadyRunning { throw .alreadyRunning }
        do {
            try made.start()
        } catch {
            daemon.withLock { $0 = nil }
            throw error
        }
        logger.info("listening on http://\(configuration.host):\(made.port)/")
    }

    /// Stops: no new connections, open streams end, then the daemon stops. Safe to call twice.
    public func stop() {
        guard let running = daemon.withLock({ current in defer { current = nil }; return current }) else { return }
        running.quiesce()
        running.stop()
        logger.info("stopped")
    }

    deinit { stop() }
}
