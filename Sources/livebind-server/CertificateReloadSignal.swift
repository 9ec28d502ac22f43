import Dispatch
import LiveBind
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// SIGHUP reloads the TLS certificate and key files (after a renewal), without dropping connections.
enum CertificateReloadSignal {
    nonisolated(unsafe) private static var source: DispatchSourceSignal?

    /// Routes SIGHUP to `server.reloadCertificate()` on a private queue. Call once, from `main`.
    static func install(server: LiveBindServer, logger: Logger) {
        signal(SIGHUP, SIG_IGN)  // the default action would end the process
        let signalSource = DispatchSource.makeSignalSource(signal: SIGHUP, queue: DispatchQueue(label: "livebind.sighup"))
        signalSource.setEventHandler {
            do {
                try server.reloadCertificate()
            } catch {
                logger.error("SIGHUP: certificate not reloaded, the previous one stays in use: \(error)")
            }
        }
        signalSource.resume()
        source = signalSource
    }
}
