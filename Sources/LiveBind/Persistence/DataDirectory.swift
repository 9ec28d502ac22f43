#if canImport(Glibc)
import Glibc
#endif
import LiveBindEngine

/// The folder given with `--data`.
enum DataDirectory {
    /// Creates `path` (one level, mode 0700) when missing; fails when it is not a directory. The
    /// corresponding C functions are `stat` and `mkdir`.
    static func prepare(_ path: String) throws(StateDatabaseError) {
        guard !path.isEmpty else { throw .directory(path, reason: "the path is empty") }
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw .directory(path, reason: "exists but is not a directory")
            }
            return
        }
        guard mkdir(path, 0o700) == 0 else {
            let reason = String(cString: strerror(errno))
            throw .directory(path, reason: "cannot be created (\(reason)); create it or pick a writable place")
        }
    }
}
