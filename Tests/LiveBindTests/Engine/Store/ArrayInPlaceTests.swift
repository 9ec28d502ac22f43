import DequeModule
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// Array edits must mutate the stored array in place: their cost must not depend on the array's length.
@Suite("Arrays mutate in place") struct ArrayInPlaceTests {
    let store = Store()
    let readings = Path(["sensor", "readings"])

    init() throws {
        // Spare capacity, so that an insert followed by a remove never needs to grow the buffer.
        var elements = Deque<JSON>(minimumCapacity: 150_000)
        elements.append(contentsOf: (0..<100_000).map { JSON.int($0) })
        try store.put("big", ["sensor": ["readings": .array(elements)]])
    }

    /// The address of the stored array's buffer (the copy used to read it is released on return).
    ///
    /// A deque's elements may start anywhere in its ring buffer, so the first element's address moves
    /// on every remove-first; the buffer object itself is what must stay. A `Deque` is one reference
    /// to that object, so its bits are the object's address.
    func bufferAddress() throws -> UInt {
        guard case .array(let elements) = try store.value(of: "big", at: readings) else {
            Issue.record("no array")
            return 0
        }
        precondition(MemoryLayout<Deque<JSON>>.size == MemoryLayout<UInt>.size, "a Deque is no longer one reference")
        return withUnsafeBytes(of: elements) { $0.load(as: UInt.self) }
    }

    @Test func removeKeepsTheBuffer() throws {
        let address = try bufferAddress()
        for step in 0..<200 {
            let index = [0, 50_000 - step, 99_000 - step * 2][step % 3]
            try store.remove(at: readings.appending(index: index), in: "big")
            #expect(try bufferAddress() == address)
        }
        #expect(try store.value(of: "big", at: readings).arrayValue?.count == 99_800)
    }

    @Test func removeFirstAndInsertAtFrontKeepTheBuffer() throws {
        let address = try bufferAddress()
        for step in 0..<1_000 {
            try store.remove(at: readings.appending(index: 0), in: "big")
            #expect(try bufferAddress() == address, "remove-first")
            try store.insert(.int(-step), at: 0, in: readings, of: "big")
            try store.insert(.int(-step), at: 0, in: readings, of: "big")
            #expect(try bufferAddress() == address, "insert at 0")
        }
        #expect(try store.value(of: "big", at: readings).arrayValue?.count == 101_000)
        #expect(try store.value(of: "big", at: readings.appending(index: 0)) == -999)
    }

    @Test func appendAndInsertOnlyReallocateToGrow() throws {
        var address = try bufferAddress()
        var reallocations = 0
        for step in 0..<1_000 {
            if step.isMultiple(of: 2) {
                try store.append(.int(step), to: readings, in: "big")
            } else {
                try store.insert(.int(step), at: step * 7, in: readings, of: "big")
            }
            let next = try bufferAddress()
            if next != address { reallocations += 1 }
            address = next
        }
        // Growth doubles the capacity, so 1,000 appends to 100,000 elements reallocate at most once or twice.
        #expect(reallocations <= 2)
    }

    @Test func replaceMoveSetAndPatchesKeepTheBuffer() throws {
        let address = try bufferAddress()
        for step in 0..<50 {
            try store.replace(at: step, in: readings, of: "big", with: .string("r\(step)"))
            #expect(try bufferAddress() == address, "replace")
            try store.move(from: step, to: 99_000, in: readings, of: "big")
            #expect(try bufferAddress() == address, "move")
            try store.set(.bool(true), at: readings.appending(index: 42 + step), in: "big")
            #expect(try bufferAddress() == address, "set")
            try store.jsonPatch(
                [
                    ["op": "add", "path": .string(readings.appending(index: 10).pointer), "value": 1],
                    ["op": "remove", "path": .string(readings.appending(index: 11).pointer)]
                ], in: "big")
            #expect(try bufferAddress() == address, "JSON Patch")
            try store.mergePatch(["sensor": ["other": .int(step)]], in: "big")
            #expect(try bufferAddress() == address, "merge patch")
        }
    }

    @Test func aSnapshotIsNotAffectedByLaterEdits() throws {
        let before = try store.snapshot("big")
        try store.append(1, to: readings, in: "big")
        try store.remove(at: readings.appending(index: 0), in: "big")
        #expect(before.value["sensor"]?["readings"]?.arrayValue?.count == 100_000)
        #expect(before.value["sensor"]?["readings"]?.arrayValue?.first == 0)
        #expect(try store.value(of: "big", at: readings.appending(index: 0)) == 1)
    }
}
