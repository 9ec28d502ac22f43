/// Sizes of values, for the store's limits (``StoreLimits``).
///
/// The size counted is the compact JSON text plus one separator for every member and element (a comma
/// the last one does not need), so that it adds up part by part: a write adjusts its model's size by
/// what it touched, without encoding the model again.
extension JSON {
    /// The counted size of this value, at any depth.
    @inline(__always)
    package var countedSize: Int {
        switch self {
        case .null: return 4
        case .bool(let value): return value ? 4 : 5
        case .int(let value): return Self.integerSize(value)
        case .double(let value): return value.description.utf8.count
        case .string(let value): return Self.stringSize(value)
        case .array, .object: return containerCountedSize
        }
    }

    /// ``countedSize`` of an array or object. With no depth limit, measuring a stored value (so finite)
    /// cannot fail.
    @inline(never)
    private var containerCountedSize: Int {
        (try? measureContainer(at: 0, maxDepth: .max)) ?? 0
    }

    /// The counted size of this value when it is stored `level` components below a model's root, with
    /// an explicit stack instead of recursion, so that no value is too deep to measure.
    ///
    /// Throws `limitExceeded(.depth)` as soon as a container would sit deeper than `maxDepth` (the
    /// root object is level 1), and `invalidValue` for a non-finite number.
    @inline(__always)
    func measure(at level: Int, maxDepth: Int) throws(StoreError) -> Int {
        if let size = try scalarSize() { return size }
        return try measureContainer(at: level, maxDepth: maxDepth)
    }

    /// ``measure(at:maxDepth:)`` of an array or object, kept out of line so scalars measure inline.
    @inline(never)
    private func measureContainer(at level: Int, maxDepth: Int) throws(StoreError) -> Int {
        var bytes = 0
        var pending: [(value: JSON, level: Int)] = [(self, level + 1)]
        while let (value, level) = pending.popLast() {
            guard level <= maxDepth else { throw .limitExceeded(.depth, limit: maxDepth, actual: level) }
            switch value {
            case .array(let elements):
                bytes += 2 + elements.count
                for element in elements {
                    if let size = try element.scalarSize() { bytes += size } else { pending.append((element, level + 1)) }
                }
            case .object(let members):
                bytes += 2 + 2 * members.count
                for (key, member) in members {
                    bytes += Self.stringSize(key)
                    if let size = try member.scalarSize() { bytes += size } else { pending.append((member, level + 1)) }
                }
            default:
                break
            }
        }
        return bytes
    }

    /// The encoded size of a scalar, `nil` for a container.
    @inline(__always)
    func scalarSize() throws(StoreError) -> Int? {
        switch self {
        case .null: return 4
        case .bool(let value): return value ? 4 : 5
        case .int(let value): return Self.integerSize(value)
        case .double(let value):
            guard value.isFinite else { throw .invalidValue("numbers must be finite (JSON has no NaN or infinity)") }
            return value.description.utf8.count
        case .string(let value): return Self.stringSize(value)
        case .array, .object: return nil
        }
    }

    /// The number of characters of `value` in decimal.
    @inline(__always)
    static func integerSize(_ value: Int) -> Int {
        let magnitude = value.magnitude
        let sign = value < 0 ? 1 : 0
        // Most numbers are short: a few compares instead of a division per digit.
        if magnitude < 10_000 {
            return sign + (magnitude < 100 ? (magnitude < 10 ? 1 : 2) : (magnitude < 1_000 ? 3 : 4))
        }
        if magnitude < 100_000_000 {
            return sign + (magnitude < 1_000_000 ? (magnitude < 100_000 ? 5 : 6) : (magnitude < 10_000_000 ? 7 : 8))
        }
        var rest = magnitude / 100_000_000
        var digits = 8
        while rest > 0 {
            rest /= 10
            digits += 1
        }
        return sign + digits
    }

    /// The encoded size of `value` with its quotes and escapes (as `encode(into:)` writes it).
    static func stringSize(_ value: String) -> Int {
        let utf8 = value.utf8
        let counted = utf8.withContiguousStorageIfAvailable { bytes in
            var size = bytes.count + 2
            for byte in bytes where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                size += escapeCost(byte)
            }
            return size
        }
        if let counted { return counted }
        var size = utf8.count + 2
        for byte in utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            size += escapeCost(byte)
        }
        return size
    }

    /// Extra bytes the escape of `byte` takes: `\n` is one more, `\u0001` five more.
    private static func escapeCost(_ byte: UInt8) -> Int {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0A, 0x0D, 0x09, 0x08, 0x0C: 1
        default: 5
        }
    }
}
