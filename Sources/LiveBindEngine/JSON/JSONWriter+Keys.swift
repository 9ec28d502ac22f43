/// Keys written once and copied after: the rows of an array repeat their keys, and copying a key's
/// text `"key":` costs less than checking it for escapes and writing it again.
extension JSONWriter {
    /// The number of leading keys of an object that are remembered, and the room for each one's text.
    static let rememberedKeys = 16
    static let keyTextRoom = 32

    /// Remembers the text of the keys at the first positions of the objects written from now on
    /// (nothing is remembered before this: most encodings are small and would not gain).
    mutating func rememberKeys() {
        guard keyTexts == nil else { return }
        keyTexts = .allocate(capacity: Self.rememberedKeys * Self.keyTextRoom)
        keyLengths = .allocate(capacity: Self.rememberedKeys)
        keyLengths?.initialize(repeating: 0, count: Self.rememberedKeys)
        lastKeys = ContiguousArray(repeating: "", count: Self.rememberedKeys)
    }

    /// Writes `"key":` for the key at `position` of an object: a copy of the text written for the key at
    /// that position before, when it was this key.
    @inline(__always)
    mutating func writeKey(_ key: String, at position: Int) {
        guard let texts = keyTexts, let lengths = keyLengths, position < Self.rememberedKeys else {
            writeString(key)
            append(UInt8(ascii: ":"))
            return
        }
        let length = lengths[position]
        let slot = texts + position * Self.keyTextRoom
        // Equal strings of the same bits compare without looking at their bytes.
        if length > 0, lastKeys[position] == key {
            reserve(length)
            if length <= 16 {
                Self.copy(slot, to: cursor, count: length)
            } else {
                cursor.initialize(from: slot, count: length)
            }
            advance(by: length)
            return
        }
        let start = count
        writeString(key)
        append(UInt8(ascii: ":"))
        let written = count - start
        guard written <= Self.keyTextRoom else {
            lengths[position] = 0
            return
        }
        slot.initialize(from: cursor - written, count: written)
        lengths[position] = written
        lastKeys[position] = key
    }
}
