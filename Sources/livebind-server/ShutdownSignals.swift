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
    /// handler) some time after `install` returns; a blocked signal waits, pending, for it. The
    /// disposition stays the default, not `SIG_IGN`: a thread that unblocks the signal before the source
    /// is registered (the main thread in `dispatchMain`) then ends the process rather than discarding the
    /// signal. A SIGTERM sent right after start was lost so, with `SIG_IGN`.
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
