import Synchronization

/// How deep in a chain of binding writes each recent commit is, per store and shared by every registry,
/// so a loop through several registries (each unaware of the others' bindings) is still stopped.
///
/// A binding records the depth of its commit after the write returns; a commit the store delivers
/// synchronously inside that write (on the writing thread) is not recorded yet, so the depth is also
/// bound to the writing thread for the duration of the write (`writing`).
enum PropagationDepth {
    /// The depth of the binding write in progress on this thread, if any.
    @TaskLocal static var writing: Int?

    private struct Key: Hashable {
        var store: ObjectIdentifier
        var sequence: UInt64
    }

    private static let depths = Mutex<[Key: Int]>([:])

    /// Records that the commit `sequence` of `store` was written by a binding at `depth`.
    static func record(_ depth: Int, sequence: UInt64, in store: Store) {
        depths.withLock { depths in
            if depths.count > 4096 {
                // Deliveries normally read an entry within a few commits; drop stale ones wholesale.
                depths = depths.filter { $0.key.sequence + 1024 > sequence }
            }
            depths[Key(store: ObjectIdentifier(store), sequence: sequence)] = depth
        }
    }

    /// The depth of the commit `sequence` of `store`: 0 for a write no binding made.
    static func depth(of sequence: UInt64, in store: Store) -> Int {
        depths.withLock { $0[Key(store: ObjectIdentifier(store), sequence: sequence)] } ?? writing ?? 0
    }

    /// Runs a binding's store write at `depth` and records the depth of the commit it made.
    /// Returns the commit's sequence, or `nil` when the write changed nothing.
    static func write(at depth: Int, in store: Store, _ operation: () throws(StoreError) -> WriteResult) throws(StoreError) -> UInt64? {
        let outcome: Result<WriteResult, StoreError> = $writing.withValue(depth) {
            do throws(StoreError) { return .success(try operation()) } catch { return .failure(error) }
        }
        let result = try outcome.get()
        guard result.changed else { return nil }
        record(depth, sequence: result.sequence, in: store)
        return result.sequence
    }
}
