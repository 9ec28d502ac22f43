/// Strings written with their escapes: runs of bytes that need none are copied whole.
extension JSONWriter {
    /// Writes `value` as a JSON string: quoted, with `"`, `\` and control characters escaped (`\n`,
    /// `\u0001`), everything else (including non-ASCII) as its UTF-8 bytes.
    mutating func writeString(_ value: String) {
        let written: Void? = value.utf8.withContiguousStorageIfAvailable { writeString(utf8: $0) }
        if written == nil {
            var copy = value
            copy.withUTF8 { writeString(utf8: $0) }
        }
    }

    /// Writes the UTF-8 text `bytes` as a JSON string.
    private mutating func writeString(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        reserve(bytes.count + 2)
        cursor.pointee = UInt8(ascii: "\"")
        advance(by: 1)
        guard let start = bytes.baseAddress else {
            append(UInt8(ascii: "\""))
            return
        }
        let count = bytes.count
        // Most strings need no escape: one check of all their bytes, one copy, within the room reserved.
        if !Self.anyNeedsEscape(start, count: count) {
            let out = cursor
            Self.copy(start, to: out, count: count)
            out[count] = UInt8(ascii: "\"")
            advance(by: count + 1)
            return
        }
        var index = 0
        var runStart = 0
        while true {
            // Eight bytes at a time while none needs an escape, then byte by byte up to the one that does.
            while index + 8 <= count,
                !Self.anyNeedsEscape(UnsafeRawPointer(start + index).loadUnaligned(as: UInt64.self))
            {
                index += 8
            }
            while index < count, !Self.needsEscape(start[index]) { index += 1 }
            guard index < count else { break }
            append(UnsafeBufferPointer(start: start + runStart, count: index - runStart))
            writeEscape(start[index])
            index += 1
            runStart = index
        }
        append(UnsafeBufferPointer(start: start + runStart, count: count - runStart))
        append(UInt8(ascii: "\""))
    }

    /// Whether `byte` must be escaped in a JSON string.
    @inline(__always)
    package static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// Whether any of the `count` bytes at `start` must be escaped, checked a word at a time: the last
    /// word (or two half words, for short strings) overlaps the one before rather than going byte by byte.
    @inline(__always)
    static func anyNeedsEscape(_ start: UnsafePointer<UInt8>, count: Int) -> Bool {
        let raw = UnsafeRawPointer(start)
        if count >= 8 {
            var index = 0
            while index + 8 <= count {
                if anyNeedsEscape(raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) { return true }
                index += 8
            }
            return index < count && anyNeedsEscape(raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
        }
        if count >= 4 {
            let head = UInt64(raw.loadUnaligned(as: UInt32.self))
            let tail = UInt64(raw.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
            return anyNeedsEscape(head | tail << 32)
        }
        for index in 0..<count where needsEscape(start[index]) { return true }
        return false
    }

    /// Whether any of the eight bytes in `word` must be escaped: one is below 0x20, a quote or a
    /// backslash. (The classic "has a byte less than n" and "has a zero byte" bit tricks, exact for
    /// telling whether there is one, not which.)
    @inline(__always)
    static func anyNeedsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let control = (word &- ones &* 0x20) & ~word
        let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let quoteZero = (quote &- ones) & ~quote
        let backslashZero = (backslash &- ones) & ~backslash
        return (control | quoteZero | backslashZero) & highs != 0
    }

    /// Writes the escape of one byte that needs it.
    private mutating func writeEscape(_ byte: UInt8) {
        reserve(6)
        let out = cursor
        out[0] = UInt8(ascii: "\\")
        let letter: UInt8
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): letter = byte
        case 0x0A: letter = UInt8(ascii: "n")
        case 0x0D: letter = UInt8(ascii: "r")
        case 0x09: letter = UInt8(ascii: "t")
        case 0x08: letter = UInt8(ascii: "b")
        case 0x0C: letter = UInt8(ascii: "f")
        default:
            let hex: StaticString = "0123456789abcdef"
            out[1] = UInt8(ascii: "u")
            out[2] = UInt8(ascii: "0")
            out[3] = UInt8(ascii: "0")
            out[4] = hex.utf8Start[Int(byte >> 4)]
            out[5] = hex.utf8Start[Int(byte & 0x0F)]
            advance(by: 6)
            return
        }
        out[1] = letter
        advance(by: 2)
    }
}
