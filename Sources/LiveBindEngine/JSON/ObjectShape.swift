/// The keys of an object the parser has built, in order, kept so that the next object with the same
/// keys (the rows of an array mostly have them) shares their storage and is read without making a
/// string: its keys are compared byte for byte with these as the text goes by.
final class ObjectShape {
    /// The keys, shared by every object of this shape.
    let keys: ContiguousArray<String>
    /// Compares the text with the keys; valid while this shape lives.
    let matcher: KeyMatcher
    private let text: UnsafeMutableBufferPointer<UInt8>
    private let entries: UnsafeMutableBufferPointer<KeyMatcher.Entry>

    /// A shape for `keys` (unique), or `nil` when a key has a byte that the text must escape (such a
    /// key never appears in the text as its own bytes) or is longer than 4 KiB.
    init?(keys: ContiguousArray<String>) {
        var text: [UInt8] = []
        var entries: [KeyMatcher.Entry] = []
        entries.reserveCapacity(keys.count)
        for key in keys {
            let begin = text.count
            for byte in key.utf8 {
                if JSONWriter.needsEscape(byte) { return nil }
                text.append(byte)
            }
            text.append(UInt8(ascii: "\""))
            text.append(UInt8(ascii: ":"))
            let length = text.count - begin
            guard length <= 4096 else { return nil }
            var word: UInt64 = 0
            for (offset, byte) in text[begin...].prefix(8).enumerated() { word |= UInt64(byte) << (8 * offset) }
            entries.append(KeyMatcher.Entry(word: word, begin: begin, length: length))
        }
        self.keys = keys
        self.text = .allocate(capacity: max(text.count, 1))
        _ = self.text.initialize(from: text)
        self.entries = .allocate(capacity: max(entries.count, 1))
        _ = self.entries.initialize(from: entries)
        matcher = KeyMatcher(text: self.text.baseAddress!, entries: self.entries.baseAddress!, count: keys.count)
    }

    deinit {
        text.deallocate()
        entries.deallocate()
    }
}

/// A shape's keys as plain pointers, for the parser to compare the text with: for each key, the text
/// `key":` (its UTF-8 bytes, the closing quote and a colon), whole and as its first eight bytes.
struct KeyMatcher {
    struct Entry {
        /// The first eight bytes of the key's text (little-endian), zeros past its end.
        let word: UInt64
        let begin: Int
        let length: Int
    }

    let text: UnsafePointer<UInt8>
    let entries: UnsafePointer<Entry>
    /// The number of keys.
    let count: Int

    /// How many bytes key `index` takes in the `available` bytes at `start` (just past an opening
    /// quote), with its closing quote and, when one follows at once, the colon; `nil` when they are not
    /// that key. `index` < `count`.
    @inline(__always)
    func match(_ index: Int, at start: UnsafePointer<UInt8>, available: Int) -> (length: Int, colon: Bool)? {
        let entry = entries[index]
        let length = entry.length
        let given = UnsafeRawPointer(start)
        if length <= 8, available >= 8 {
            // One word, the bytes past the key masked off (little-endian: they are the high ones).
            let difference = given.loadUnaligned(as: UInt64.self) ^ entry.word
            if difference & (UInt64.max >> (64 - 8 * UInt64(length))) == 0 { return (length, true) }
            // Whitespace before the colon: the key and its quote alone.
            return difference & (UInt64.max >> (72 - 8 * UInt64(length))) == 0 ? (length - 1, false) : nil
        }
        let expected = text + entry.begin
        let quoted = length - 1
        guard quoted <= available else { return nil }
        var offset = 0
        while offset + 8 <= quoted {
            if given.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                != UnsafeRawPointer(expected).loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            {
                return nil
            }
            offset += 8
        }
        while offset < quoted {
            if start[offset] != expected[offset] { return nil }
            offset += 1
        }
        return quoted < available && start[quoted] == UInt8(ascii: ":") ? (length, true) : (quoted, false)
    }
}
