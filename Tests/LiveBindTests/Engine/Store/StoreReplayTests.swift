import Synchronization
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// A commit log that keeps what the store appends until the test says it is in the shared log (as a
/// cluster's stream acknowledges), so that a test can roll back what is not.
final class HeldLog: CommitLog, Sendable {
    private let held = OrderedMutex<[Commit]>([])
    func attach(to store: Store) {}
    func append(_ commit: Commit) { held.withLock { $0.append(commit) } }
    func append(contentsOf commits: [Commit]) { held.withLock { $0 += commits } }
    func flush() {}
    /// The commits appended and not yet taken.
    func take() -> [Commit] {
        held.withLock { commits in
            defer { commits.removeAll() }; return commits
        }
    }
}

@Suite("Store replay and roll-back (a shared log)") struct StoreReplayTests {
    func makeStore() -> (Store, HeldLog) {
        let log = HeldLog()
        return (Store(restoring: [], lastSequence: 0, log: log), log)
    }

    /// A store as `makeStore()` makes it, with `models` already in the shared log (snapshots at
    /// sequences 1, 2, …).
    func makeStore(holding models: KeyValuePairs<String, JSON>) -> (Store, HeldLog) {
        let (store, log) = makeStore()
        let snapshots = models.enumerated().map { index, model in
            Commit(sequence: UInt64(index + 1), model: model.key, revision: 1, kind: .snapshot(model.value))
        }
        replayDurable(snapshots, into: store)
        return (store, log)
    }

    /// Applies `commits` as the shared log's and tells the durable observers, as a node does with
    /// what its stream delivered.
    func replayDurable(_ commits: [Commit], into store: Store) {
        let (applied, calls, _) = store.replay(commits) {}
        calls.run(applied)
    }

    @Test func replayedCommitsKeepTheLogsSequencesAndReachTheDurableFeed() throws {
        let (store, _) = makeStore()
        let fed = OrderedMutex<[UInt64]>([])
        let token = store.observeDurable { commits in fed.withLock { $0 += commits.map(\.sequence) } }
        defer { token.cancel() }
        let commits = [
            Commit(sequence: 1, model: "a", revision: 1, kind: .snapshot(["list": [1]])),
            Commit(sequence: 3, model: "a", revision: 2, kind: .changes([Change(kind: .insert, path: Path(["list"]), value: 2, index: 1)]))
        ]
        let (applied, calls, failure) = store.replay(commits) {}
        calls.run(applied)
        #expect(failure == nil && applied.map(\.sequence) == [1, 3])
        #expect(try store.value(of: "a") == ["list": [1, 2]])
        #expect(store.modelNames().map(\.revision) == [2])
        #expect(store.lastSequence == 3 && store.visibleSequence == 3)
        #expect(fed.withLock { $0 } == [1, 3])
        // The next local write is ordered after the replayed ones.
        #expect(try store.set(5, at: Path(["n"]), in: "a").sequence == 4)
    }

    @Test func aReplayedCommitThatDoesNotApplyStopsTheReplayThere() {
        let (store, _) = makeStore()
        let commits = [
            Commit(sequence: 1, model: "a", revision: 1, kind: .snapshot(["x": 1])),
            Commit(sequence: 2, model: "b", revision: 2, kind: .changes([Change(kind: .set, path: Path(["y"]), value: 1)])),
            Commit(sequence: 3, model: "a", revision: 2, kind: .drop)
        ]
        let (applied, _, failure) = store.replay(commits) {}
        #expect(applied.map(\.sequence) == [1])
        #expect(failure?.contains("does not exist") == true)
        #expect(store.lastSequence == 1)
    }

    @Test func rollBackUndoesEveryCommitNotInTheLog() throws {
        let (store, log) = makeStore(holding: ["a": ["x": 1]])
        let sizeBefore = store.totalSize
        try store.set(2, at: Path(["x"]), in: "a")
        try store.put("b", ["new": true])
        try store.drop("a")
        #expect(store.lastSequence == 4)
        // What clients see stays the durable view meanwhile.
        #expect(store.visibleSnapshot(models: nil).models.map(\.name) == ["a"])
        var forgotten = 0
        let undone = store.rollBackToDurable { forgotten = log.take().count }
        #expect(undone == 3 && forgotten == 3)
        #expect(store.lastSequence == 1)
        #expect(try store.value(of: "a") == ["x": 1])
        #expect(store.modelNames().map(\.name) == ["a"] && store.modelNames().map(\.revision) == [1])
        #expect(store.totalSize == sizeBefore)
        // The sequence is taken again by the next write.
        #expect(try store.set(3, at: Path(["x"]), in: "a").sequence == 2)
    }

    @Test func replayRollsBackPendingCommitsFirst() throws {
        let (store, log) = makeStore(holding: ["a": ["x": 1]])
        try store.set(2, at: Path(["x"]), in: "a")  // sequence 2, lost the race
        let other = Commit(sequence: 2, model: "a", revision: 2, kind: .changes([Change(kind: .set, path: Path(["x"]), value: 7)]))
        let (second, _, failure) = store.replay([other]) { _ = log.take() }
        #expect(failure == nil && second.map(\.sequence) == [2])
        #expect(try store.value(of: "a") == ["x": 7])
        #expect(store.visibleSnapshot(models: ["a"]).models.first?.revision == 2)
    }

    @Test func bindingsDoNotRunAgainForReplayedCommits() throws {
        let (store, _) = makeStore(holding: ["a": ["x": 1], "b": ["y": 1]])
        let registry = BindingRegistry(store: store)
        _ = try registry.bind(BindingSpec("a.x", "b.y"))
        let replayed = Commit(sequence: 3, model: "a", revision: 2, kind: .changes([Change(kind: .set, path: Path(["x"]), value: 5)]))
        _ = store.replay([replayed]) {}
        #expect(try store.value(of: "a", at: Path(["x"])) == 5)
        // The writer's node logged what the binding derived; this node does not write it again.
        #expect(try store.value(of: "b", at: Path(["y"])) == 1)
        #expect(store.lastSequence == 3)
    }

    @Test func aRefusedWriteIsMadeAgainOnTheNewStateOrRefusedWhenItNoLongerApplies() throws {
        let (store, log) = makeStore(holding: ["a": ["x": 1, "list": [1, 2]]])
        try store.set(2, at: Path(["x"]), in: "a")  // sequence 2
        try store.write("a") { (editor: inout ModelEditor) throws(StoreError) in
            try editor.insert(9, at: 2, in: Path(["list"]))  // sequence 3: at the end of two
        }
        // Another writer's commit took sequence 2: it emptied the list and set y.
        let other = Commit(
            sequence: 2, model: "a", revision: 2,
            kind: .changes([
                Change(kind: .set, path: Path(["list"]), value: []), Change(kind: .set, path: Path(["y"]), value: true)
            ]))
        var refused: [Commit] = []
        _ = store.replay([other]) { refused = log.take() }
        #expect(refused.map(\.sequence) == [2, 3] && refused.allSatisfy { $0.depth == 0 })
        try store.reapply(refused[0])
        #expect(throws: StoreError.self) { try store.reapply(refused[1]) }
        // The set is applied again after the other writer's commit (last writer wins); the insert at
        // index 2 of what is now an empty list changed nothing.
        #expect(try store.value(of: "a") == ["x": 2, "list": [], "y": true])
        #expect(store.lastSequence == 3 && store.modelNames().map(\.revision) == [3])
        #expect(log.take().map(\.sequence) == [3])
    }

    @Test func aBindingWhoseDerivedCommitWasRefusedCatchesUp() throws {
        let (store, log) = makeStore(holding: ["a": ["x": 1], "b": ["y": 10, "z": 0]])
        let registry = BindingRegistry(store: store)
        _ = try registry.bind(BindingSpec("a.x", "b.y", transform: TransformSpec("scale", ["factor": 10])))
        try store.set(3, at: Path(["x"]), in: "a")  // sequence 3, in the log
        let written = log.take()
        #expect(written.map(\.depth) == [0, 1] && written.map(\.model) == ["a", "b"])
        // The write's own commit is stored; its derived one still waits (as a node keeps it).
        _ = store.logDidPersist([written[0]])
        log.append(written[1])
        // Another writer's commit took sequence 4 (b.z): the derived b.y = 30 is rolled back.
        let other = Commit(sequence: 4, model: "b", revision: 2, kind: .changes([Change(kind: .set, path: Path(["z"]), value: 1)]))
        var refused: [Commit] = []
        _ = store.replay([other]) { refused = log.take() }
        #expect(refused.map(\.sequence) == [4] && refused[0].depth == 1)
        #expect(try store.value(of: "b") == ["y": 10, "z": 1])
        registry.catchUp(after: refused)
        #expect(try store.value(of: "b") == ["y": 30, "z": 1])
        #expect(log.take().map(\.sequence) == [5])
        // Caught up already: a second catch-up commits nothing.
        registry.catchUp(after: refused)
        #expect(log.take().isEmpty)
    }

    /// A rollback gives its sequence numbers to the next commits; a binding that had forwarded a
    /// rolled-back write must still forward the next one, though it has the same sequence (a cluster's
    /// node left a bound target stale for good: its binding took the new write for one it had seen).
    /// Seeded rounds of writes, derived writes and rollbacks: after each, the target is the source.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func aBindingForwardsWritesThatReuseRolledBackSequences(seed: UInt64) throws {
        let (store, log) = makeStore(holding: ["src": ["t": 0], "dst": ["copy": 0]])
        let registry = BindingRegistry(store: store)
        try registry.bind(BindingSpec("src.t", "dst.copy"))
        var random = SplitMix(seed: seed)
        for round in 1...60 {
            for write in 0...Int(random.next() % 3) { try store.set(.int(round * 10 + write), at: "src.t") }
            #expect(store.waitUntilDelivered())
            #expect(store.at("dst.copy") == store.at("src.t"), "round \(round): the copy is stale")
            if random.next() % 2 == 0 {
                store.rollBackToDurable { _ = log.take() }
                #expect(store.at("dst.copy") == store.at("src.t"), "round \(round): after the rollback")
            } else {
                // What the shared log took becomes durable, as a cluster's stream acknowledges it.
                replayDurable(log.take(), into: store)
            }
        }
        #expect(registry.all.allSatisfy { $0.lastError == nil })
    }
}
