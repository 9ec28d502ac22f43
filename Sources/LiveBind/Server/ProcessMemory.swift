#if canImport(Glibc)
import Glibc
#endif

/// The process's heap, as the C allocator keeps it.
enum ProcessMemory {
    /// Gives back to the system every whole page the allocator holds free, as after loading a data
    /// directory, whose parsed copies are gone but whose pages glibc keeps. The corresponding C
    /// function is `malloc_trim`, looked up by name: the Glibc module leaves out `malloc.h`.
    static func returnFreePages() {
        #if canImport(Glibc)
        guard let symbol = dlsym(nil, "malloc_trim") else { return }  // nil: RTLD_DEFAULT
        let trim = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        _ = trim(0)
        #endif
    }
}
