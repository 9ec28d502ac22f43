import Dispatch
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// SIGINT/SIGTERM handling through dispatch sources, so shutdown runs as ordinary code, not in a handler.
enum ShutdownSignals {
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    /// Blocks SIGINT and SIGTERM in the calling thread and every thread started after it. Call first in
    /// `main`, before any thread exists. libdispatch registers a signal source (a `signalfd` and a
    /// handler) some time after `install` returns, while `install` has set the signal to `SIG_IGN`: a
    /// signal that comes in between is discarded unless every thread blocks it (a blocked signal is never
    /// ignored; it waits, pending, for the source). A SIGTERM sent right after start was lost so.
    static func hold() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Routes SIGINT and SIGTERM to `shutdown`, once, on a private queue. Call once, from `main`, after
    /// ``hold()``.
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
