import CHeap
import Foundation
import LiveBindEngine

// `EngineProfile memory [MiB]`: where a model's bytes go in the engine. For three shapes of state
// (many small models, rows of objects with the same keys, long strings) it parses compact JSON of
// about MiB mebibytes, puts the values into a Store, and prints the heap bytes each holds against the
// JSON's bytes; then what one value of each kind costs, from arrays of 100,000 of them.

/// Bytes the process's heap holds now (glibc's count: blocks in use plus mmapped ones).
func heapBytes() -> Int { Int(cheap_allocated_bytes()) }

/// The shapes of issue 45: `(model name, its compact JSON)` for about `bytes` bytes in all.
func memoryShape(_ name: String, bytes: Int) -> [(String, [UInt8])] {
    switch name {
    case "small-models":
        // Sensors of about 110 bytes each, one model apiece.
        let one = #"{"name":"sensor-000000","temperature":21.5,"unit":"C","tags":["lab","north"],"on":true,"reads":1234}"#
        return (0..<max(1, bytes / one.utf8.count)).map { index in
            ("sensor\(index)", Array(one.replacingOccurrences(of: "000000", with: padded(index)).utf8))
        }
    case "rows":
        // One model: an array of orders, every row the same six keys.
        let row = #"{"id":ID,"customer":"customer-000000","status":"open","total":129.5,"items":3,"paid":false}"#
        let rows = (0..<max(1, bytes / (row.utf8.count + 4))).map { index in
            row.replacingOccurrences(of: "000000", with: padded(index)).replacingOccurrences(of: "ID", with: String(index + 100_000))
        }
        return [("orders", Array("{\"rows\":[\(rows.joined(separator: ","))]}".utf8))]
    default:
        // One model: an array of strings of about 1 KiB.
        let text = String(repeating: "lorem ipsum ", count: 85)
        let strings = (0..<max(1, bytes / (text.utf8.count + 8))).map { "\"\(text)\($0)\"" }
        return [("texts", Array("{\"texts\":[\(strings.joined(separator: ","))]}".utf8))]
    }
}

private func padded(_ index: Int) -> String {
    let digits = String(index)
    return String(repeating: "0", count: max(0, 6 - digits.count)) + digits
}

func memoryProfile(mebibytes: Int) throws {
    print("| shape | JSON bytes | parsed values ÷ JSON | in a Store ÷ JSON |")
    print("|---|---:|---:|---:|")
    for shape in ["small-models", "rows", "strings"] {
        let documents = memoryShape(shape, bytes: mebibytes << 20)
        let jsonBytes = documents.reduce(0) { $0 + $1.1.count }
        let start = heapBytes()
        var limits = StoreLimits()
        limits.maxModelBytes = Int.max
        limits.maxStoreBytes = Int.max
        let store = Store(limits: limits)
        try withExtendedLifetime(documents) {
            // The texts stay alive until both figures are taken: freed early, they would hide as many bytes.
            var values = try documents.map { ($0.0, try JSON(parsing: $0.1)) }
            let parsed = heapBytes() - start
            for (name, value) in values { try store.put(name, value) }
            values.removeAll()
            let stored = heapBytes() - start
            print("| \(shape) | \(jsonBytes) | \(ratio(parsed, jsonBytes)) | \(ratio(stored, jsonBytes)) |")
        }
        withExtendedLifetime(store) {}
    }
    print("\n| one value, in an array of 100,000 | its JSON | heap bytes | per JSON byte (with its comma) |")
    print("|---|---|---:|---:|")
    let kinds: [(String, String)] = [
        ("number", "1234.5"), ("true", "true"), ("string of 4 bytes (15 or fewer: inline)", #""open""#),
        ("string of 40 bytes", #""customer-000000-aaaaaaaaaaaaaaaaaaaaaaaa""#),
        ("empty object", "{}"), ("object of one member", #"{"a":1}"#),
        ("object of six members", #"{"id":1,"customer":"c","status":"open","total":1.5,"items":3,"paid":false}"#),
        ("empty array", "[]"), ("array of one number", "[1]")
    ]
    for (label, text) in kinds {
        let array = Array("[\(Array(repeating: text, count: 100_000).joined(separator: ","))]".utf8)
        let start = heapBytes()
        let value = try JSON(parsing: array)
        let each = Double(heapBytes() - start) / 100_000
        print("| \(label) | `\(text)` | \(String(format: "%.1f", each)) | \(String(format: "%.1f", each / Double(text.utf8.count + 1))) |")
        withExtendedLifetime((value, array)) {}
    }
    print("\n`MemoryLayout<JSON>.stride`: \(MemoryLayout<JSON>.stride) bytes")
}

private func ratio(_ bytes: Int, _ of: Int) -> String { String(format: "%.2f× (%d)", Double(bytes) / Double(of), bytes) }
