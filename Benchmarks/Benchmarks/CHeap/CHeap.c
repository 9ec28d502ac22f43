// CHeap is header-only: see include/CHeap.h.
