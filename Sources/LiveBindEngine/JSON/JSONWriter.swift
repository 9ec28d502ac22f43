/// A growing byte buffer that JSON text is written into, one pointer write at a time.
///
/// Appending to an `[UInt8]` checks uniqueness and capacity on every byte; the writer checks capacity
/// once per piece (`reserve`) and then writes through a pointer. The text is copied into an array once,
/// at the end. Not shared between threads: each encoding makes its own.
package struct JSONWriter: ~Copyable {
    /// The start of the allocation; `count` bytes of it are written.
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// The number of bytes written so far.
    private(set) var count = 0
    /// The text of the keys last written at each of an object's first positions, once
    /// `rememberKeys()` was called (see `JSONWriter+Keys.swift`): the text, each one's length, the keys.
    var keyTexts: UnsafeMutablePointer<UInt8>?
    var keyLengths: UnsafeMutablePointer<Int>?
    var lastKeys: ContiguousArray<String> = []

    /// A writer with room for `capacity` bytes before it first grows.
    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deallocate()
        keyTexts?.deallocate()
        keyLengths?.deallocate()
    }

    /// Makes room for `extra` more bytes, so that the next `extra` bytes can go through `cursor`.
    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if capacity - count < extra { grow(extra) }
    }

    /// Doubles the allocation (or more, for one large piece); out of line, as it is rare.
    @inline(never)
    private mutating func grow(_ extra: Int) {
        let newCapacity = max(capacity * 2, count + extra)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    /// Where the next byte goes. Only valid for as many bytes as the last `reserve` made room for.
    @inline(__always)
    var cursor: UnsafeMutablePointer<UInt8> { base + count }

    /// Counts `written` bytes put through `cursor` as written.
    @inline(__always)
    mutating func advance(by written: Int) {
        count += written
    }

    /// Appends one byte.
    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    /// Appends the bytes of a literal such as `"null"`.
    @inline(__always)
    mutating func append(_ literal: StaticString) {
        append(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Appends `bytes` with one copy.
    @inline(__always)
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        reserve(bytes.count)
        Self.copy(source, to: base + count, count: bytes.count)
        count += bytes.count
    }

    /// Copies `count` bytes. Most pieces of JSON text are short (keys, small strings), and a call to
    /// `memcpy` costs more than the copy itself: up to 16 bytes move as two overlapping words.
    @inline(__always)
    static func copy(_ source: UnsafePointer<UInt8>, to target: UnsafeMutablePointer<UInt8>, count: Int) {
        let from = UnsafeRawPointer(source), to = UnsafeMutableRawPointer(target)
        if count >= 8 {
            guard count <= 16 else {
                target.initialize(from: source, count: count)
                return
            }
            let head = from.loadUnaligned(as: UInt64.self)
            let tail = from.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            to.storeBytes(of: head, as: UInt64.self)
            to.storeBytes(of: tail, toByteOffset: count - 8, as: UInt64.self)
        } else if count >= 4 {
            let head = from.loadUnaligned(as: UInt32.self)
            let tail = from.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
            to.storeBytes(of: head, as: UInt32.self)
            to.storeBytes(of: tail, toByteOffset: count - 4, as: UInt32.self)
        } else {
            for index in 0..<count { target[index] = source[index] }
        }
    }

    /// Appends everything written to `buffer`.
    func append(to buffer: inout [UInt8]) {
        buffer.append(contentsOf: UnsafeBufferPointer(start: base, count: count))
    }

    /// Everything written, as an array of exactly that size.
    func bytes() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { array, initialized in
            array.baseAddress?.initialize(from: base, count: count)
            initialized = count
        }
    }
}
