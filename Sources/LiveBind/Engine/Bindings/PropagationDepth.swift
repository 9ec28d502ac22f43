import Synchronization

/// How deep in a chain of binding writes each recent commit is, per store and shared by every registry,
/// so a loop through several registries (each unaware of the others' bindings) is still stopped.
enum PropagationDepth {
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
        depths.withLock { $0[Key(store: ObjectIdentifier(store), sequence: sequence)] ?? 0 }
    }
}
