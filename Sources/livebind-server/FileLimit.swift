import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The open-file limit: each stream is one socket, so thousands of streams need thousands of descriptors.
enum FileLimit {
    /// Raises the soft `RLIMIT_NOFILE` towards `wanted` (capped by the hard limit). The corresponding C function is `setrlimit`.
    static func raise(toAtLeast wanted: Int, logger: Logger) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        guard limit.rlim_cur < rlim_t(wanted) else { return }
        limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 || limit.rlim_cur < rlim_t(wanted) {
            logger.warning("open-file limit is \(limit.rlim_cur); fewer streams than --max-streams may fit (raise ulimit -n)")
        }
    }
}
