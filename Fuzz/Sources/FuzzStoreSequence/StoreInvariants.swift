import FuzzDriver
import Glibc
import LiveBind

/// What must hold of a store after every operation, measured here independently of the store's own
/// bookkeeping (its kept sizes are what is being checked).
enum StoreInvariants {
    /// The size the store counts for `value`: its compact JSON plus one separator per member and element,
    /// that is the encoding plus one byte per non-empty container (the encoding has one comma fewer than
    /// members or elements in each). Also the nesting depth, the root container being level 1. Walks with
    /// a stack, so no value is too deep to measure.
    static func measure(_ value: JSON) -> (countedSize: Int, depth: Int) {
        var nonEmpty = 0, depth = 0
        var pending: [(JSON, Int)] = [(value, 1)]
        while let (next, level) = pending.popLast() {
            switch next {
            case .array(let elements):
                depth = max(depth, level)
                if !elements.isEmpty { nonEmpty += 1 }
                for element in elements { pending.append((element, level + 1)) }
            case .object(let members):
                depth = max(depth, level)
                if !members.isEmpty { nonEmpty += 1 }
                for member in members.values { pending.append((member, level + 1)) }
            default:
                break
            }
        }
        return (value.encoded().count + nonEmpty, depth)
    }

    /// Every model's kept size against its measure, the total against their sum with
    /// `StoreLimits.modelOverhead` for each model, and each model's depth and size, and the total, within
    /// `store.limits`. Returns the models' snapshots by name.
    @discardableResult
    static func check(_ store: Store, after describe: @autoclosure () -> String) -> [String: ModelSnapshot] {
        func operation() -> String { describe() }
        let (_, snapshots) = store.snapshot(models: nil)
        var total = 0
        var byName: [String: ModelSnapshot] = [:]
        for snapshot in snapshots {
            byName[snapshot.name] = snapshot
            let (counted, depth) = measure(snapshot.value)
            guard let kept = try? store.size(of: snapshot.name) else { fail("\(operation()): no size for \(snapshot.name)") }
            if kept != counted {
                fail("\(operation()): store.size(of: \(snapshot.name)) is \(kept), but the value counts \(counted): \(snapshot.value)")
            }
            if depth > store.limits.maxDepth {
                fail("\(operation()): \(snapshot.name) is \(depth) deep, over maxDepth \(store.limits.maxDepth)")
            }
            if counted > store.limits.maxModelBytes {
                fail("\(operation()): \(snapshot.name) counts \(counted) bytes, over maxModelBytes \(store.limits.maxModelBytes)")
            }
            total += counted + StoreLimits.modelOverhead
        }
        if store.totalSize != total {
            fail("\(operation()): store.totalSize is \(store.totalSize), the models and their overheads sum to \(total)")
        }
        if total > store.limits.maxStoreBytes { fail("\(operation()): the store counts \(total), over maxStoreBytes") }
        return byName
    }

    /// A refused write changed nothing: no model's value or revision, no model added or dropped, and
    /// neither the sequence nor what observers heard.
    static func expectUnchanged(
        _ before: [String: ModelSnapshot], _ after: [String: ModelSnapshot],
        sequences: (UInt64, UInt64), commits: (Int, Int), after describe: @autoclosure () -> String,
        error: any Error
    ) {
        func operation() -> String { describe() }
        if Set(before.keys) != Set(after.keys) {
            fail("\(operation()) failed (\(error)) but changed the models: \(before.keys.sorted()) → \(after.keys.sorted())")
        }
        for (name, old) in before {
            guard let new = after[name] else { continue }
            if new.revision != old.revision { fail("\(operation()) failed (\(error)) but bumped \(name)'s revision") }
            if new.value.encoded() != old.value.encoded() {
                fail("\(operation()) failed (\(error)) but changed \(name): \(old.value) → \(new.value)")
            }
        }
        if sequences.0 != sequences.1 { fail("\(operation()) failed (\(error)) but used sequence \(sequences.1)") }
        if commits.0 != commits.1 { fail("\(operation()) failed (\(error)) but an observer heard a commit") }
    }
}
