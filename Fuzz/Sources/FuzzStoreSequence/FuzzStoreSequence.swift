import FuzzDriver
import LiveBind
import Synchronization

/// libFuzzer entry point: the input is a *sequence* of up to 64 operations (set, insert, append, remove,
/// replace, move, put, drop, JSON Patch, merge patch, multi-edit write) with small generated values and
/// paths, deep values and copies, run against one `Store` with small limits. After every operation:
/// no crash; each model's kept size equals its value's counted size (compact JSON plus one separator per
/// member and element) and the total their sum plus `StoreLimits.modelOverhead` each; no model is deeper or larger than the limits allow; a
/// refused write changed no value, revision, sequence or model list, and no observer heard of it; a
/// write that changed something used exactly one sequence number and was heard once.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStoreSequence(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(UnsafeBufferPointer(start: data, count: size))
    var limits = StoreLimits()
    limits.maxDepth = 8
    limits.maxModelBytes = 4_096
    limits.maxStoreBytes = 12_288  // under three full models and their overheads (15 KiB): it binds
    limits.maxPatchOperations = 16
    let store = Store(limits: limits)  // a fresh store per input: memory per run stays within the limits
    let heard = CommitLog()
    let token = store.observeAll { heard.record($0) }
    do { try store.put("a", ["list": [1, 2, 3], "n": ["x": 1]]) } catch { fail("seed model refused: \(error)") }
    var snapshots = StoreInvariants.check(store, after: "the seed put")

    for step in 0..<64 where !input.isAtEnd {
        let sequence = store.lastSequence
        let commits = heard.count
        let operation = StoreOperation.decode(&input, store: store)
        func name() -> String { "step \(step): \(operation.description.prefix(600))" }
        do {
            let result = try operation.run(on: store)
            let after = StoreInvariants.check(store, after: name())
            let used = store.lastSequence - sequence
            if result.changed {
                if used != 1 || result.sequence != store.lastSequence {
                    fail("\(name()) changed something but used \(used) sequence numbers")
                }
                if heard.count != commits + 1 || heard.last != store.lastSequence {
                    fail("\(name()): observers heard \(heard.count - commits) commits")
                }
            } else if used != 0 || heard.count != commits {
                fail("\(name()) changed nothing but used \(used) sequence numbers and was heard \(heard.count - commits) times")
            }
            snapshots = after
        } catch {
            if case .limitExceeded(_, let limit, let actual) = error as? StoreError, actual <= limit {
                fail("\(name()) refused with \(error), which is within the limit")
            }
            let after = StoreInvariants.check(store, after: name())
            StoreInvariants.expectUnchanged(
                snapshots, after, sequences: (sequence, store.lastSequence),
                commits: (commits, heard.count), after: name(), error: error)
        }
    }
    token.cancel()
    return 0
}

/// The sequence numbers of the commits a store observer heard, in order.
final class CommitLog: Sendable {
    private let sequences = Mutex<[UInt64]>([])

    func record(_ commit: Commit) { sequences.withLock { $0.append(commit.sequence) } }
    var count: Int { sequences.withLock { $0.count } }
    var last: UInt64? { sequences.withLock { $0.last } }
}

/// Process entry: SwiftPM names an executable's entry `FuzzStoreSequence_main`; hand it to libFuzzer's driver.
@_cdecl("FuzzStoreSequence_main")
public func fuzzStoreSequenceMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzStoreSequence)
}
