// The heap's size as glibc counts it, for EngineProfile's memory mode (Swift's Glibc module does not
// include <malloc.h>).
#include <malloc.h>
#include <stddef.h>

/// Bytes allocated now: small blocks in use plus the large blocks glibc mmapped.
static inline size_t cheap_allocated_bytes(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}
