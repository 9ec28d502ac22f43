import LiveBind
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The open-file limit: each stream is one socket, so the number of descriptors a process may hold
/// bounds how many streams it can serve.
enum FileLimit {
    /// Raises the soft `RLIMIT_NOFILE` to the hard limit (the most an unprivileged process may take) and
    /// returns the soft limit now in force (`Int.max` for none: `RLIM_INFINITY` is all ones). The
    /// corresponding C functions are `getrlimit` and `setrlimit`.
    static func raiseToHard() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return Int.max }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur == rlim_t.max ? Int.max : Int(clamping: limit.rlim_cur)
    }

    /// The descriptors kept for everything but streams out of `limit`: request connections, the
    /// listening sockets, the data directory's files, the cluster's connections. A quarter of the limit,
    /// at most 1,024.
    static func reserved(of limit: Int) -> Int { min(1024, limit / 4) }

    /// Fits `streams.maxStreams` to the open-file limit (raised to the hard limit first) and says at
    /// start how many streams the server may hold: a `--max-streams` the descriptors cannot serve is
    /// lowered, with a warning, so that streams past the limit get 503 rather than a failed `accept`.
    static func fitStreams(_ configuration: inout LiveBindServer.Configuration, logger: Logger) {
        let files = raiseToHard()
        guard files < Int.max else {
            logger.info("Streams: up to \(configuration.streams.maxStreams) at once (--max-streams; no open-file limit)")
            return
        }
        let reserve = reserved(of: files)
        let byFiles = max(1, files - reserve)
        let asked = configuration.streams.maxStreams
        if asked > byFiles {
            configuration.streams.maxStreams = byFiles
            logger.warning(
                "Streams: up to \(byFiles) at once, not --max-streams \(asked): the open-file limit is \(files) and \(reserve) are kept for requests and files (raise the hard limit: ulimit -Hn, systemd LimitNOFILE=)"
            )
        } else {
            logger.info(
                "Streams: up to \(asked) at once (--max-streams; the open-file limit, \(files), would allow \(byFiles))")
        }
    }
}
