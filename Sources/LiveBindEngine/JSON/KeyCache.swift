/// The short keys one parse has made, by their bytes: the objects of an array mostly repeat the same
/// keys, and taking a string made before costs less than decoding it again.
///
/// Direct-mapped: a slot holds the last key whose fingerprint chose it. A key of up to 16 ASCII bytes is
/// its length and two words (the first and the last eight bytes, or fewer for shorter keys), so a hit
/// is exact.
struct KeyCache {
    /// The number of slots, a power of two.
    static let size = 64

    private struct Entry {
        var count: Int
        var words: (UInt64, UInt64)
        var key: String
    }

    private var entries: [Entry?] = []

    /// The key in `slot` when its bytes are the ones given.
    @inline(__always)
    func lookup(slot: Int, count: Int, words: (UInt64, UInt64)) -> String? {
        guard slot < entries.count, let entry = entries[slot] else { return nil }
        guard entry.count == count, entry.words.0 == words.0, entry.words.1 == words.1 else { return nil }
        return entry.key
    }

    /// Remembers `key` in `slot`, replacing what was there.
    mutating func store(_ key: String, slot: Int, count: Int, words: (UInt64, UInt64)) {
        if entries.isEmpty { entries = Array(repeating: nil, count: Self.size) }
        entries[slot] = Entry(count: count, words: words, key: key)
    }
}
