import Dispatch
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// SIGINT/SIGTERM handling through dispatch sources, so shutdown runs as ordinary code, not in a handler.
enum ShutdownSignals {
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    /// Routes SIGINT and SIGTERM to `shutdown`, once, on a private queue. Call once, from `main`.
    static func install(logger: Logger, shutdown: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "livebind.signals")
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)  // the default action would kill us before the source sees it
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                logger.info("signal \(number): shutting down")
                shutdown()
            }
            source.resume()
            sources.append(source)
        }
    }
}
