import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Thread {
    /// A thread, not started yet, that runs `body` under `name`: for Foundation (`Thread.name`) and
    /// for the operating system, where `top -H`, `perf` and `/proc/PID/task/*/comm` show it.
    ///
    /// On Linux, Foundation's `Thread.name` does not reach the operating system, so the thread names
    /// itself as it starts. Linux keeps the first 15 bytes of a name.
    convenience init(named name: String, _ body: @escaping @Sendable () -> Void) {
        self.init {
            Thread.nameCurrentThreadForSystem(name)
            body()
        }
        self.name = name
    }

    /// Names the calling thread for the operating system through `/proc/thread-self/comm`; does
    /// nothing where that file cannot be written.
    private static func nameCurrentThreadForSystem(_ name: String) {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }
}
