import Foundation
import Synchronization
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// Hammers one store from several threads; `make test` runs this under the thread sanitizer.
@Suite("Store concurrency") struct StoreConcurrencyTests {
    /// Runs `body(index)` on `count` new threads at once and waits for all of them.
    func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            let thread = Thread {
                body(index)
                group.leave()
            }
            thread.start()
        }
        group.wait()
    }

    // No store-wide observer: each write with one observer is delivered directly by its writer when
    // the store is idle, and queued for the current deliverer otherwise.
    @Test func directDeliveriesFromManyThreadsArriveOnceInOrderAndNeverOverlap() throws {
        let writers = 4, writesPerWriter = 500
        let store = Store()
        let members = (0..<writers).map { (key: "w\($0)", value: JSON.int(0)) }
        try store.put("m", .object(.init(uniqueKeysWithValues: members)))
        let perWriter = TestLocked<[[Int]]>(Array(repeating: [], count: writers))
        let inside = Atomic<Int>(0)
        let overlapped = Atomic<Bool>(false)
        var tokens: [ObservationToken] = []
        for writer in 0..<writers {
            tokens.append(
                store.observe(Path(["w\(writer)"]), in: "m") { change in
                    if inside.add(1, ordering: .acquiringAndReleasing).newValue != 1 { overlapped.store(true, ordering: .relaxed) }
                    if case .int(let value)? = change.value { perWriter.withLock { $0[writer].append(value) } }
                    inside.subtract(1, ordering: .acquiringAndReleasing)
                })
        }
        onThreads(writers) { index in
            let member = Path(["w\(index)"])
            for step in 1...writesPerWriter { _ = try? store.set(.int(step), at: member, in: "m") }
        }
        // Every writer has returned; calls of others' writes may still be running on the relay thread.
        #expect(store.waitUntilDelivered())
        let overlaps = overlapped.load(ordering: .relaxed)
        #expect(!overlaps)
        #expect(perWriter.withLock { $0 } == Array(repeating: Array(1...writesPerWriter), count: writers))
        _ = tokens
    }

    @Test func writersObserversAndReadersAgreeOnOrder() throws {
        let writers = 4, writesPerWriter = 400
        let store = Store(startingSequence: 1_000)
        var initial: [String: JSON] = ["a": 0, "b": 0, "mirror": 0, "log": []]
        for writer in 0..<writers { initial["w\(writer)"] = 0 }
        try store.put("m", .object(.init(uniqueKeysWithValues: initial.sorted { $0.key < $1.key })))

        let sequences = TestLocked<[UInt64]>([])
        let all = store.observeAll { commit in sequences.withLock { $0.append(commit.sequence) } }
        let perWriter = TestLocked<[[Int]]>(Array(repeating: [], count: writers))
        var tokens: [ObservationToken] = []
        for writer in 0..<writers {
            tokens.append(
                store.observe(Path(["w\(writer)"]), in: "m") { change in
                    guard case .int(let value)? = change.value else { return }
                    perWriter.withLock { $0[writer].append(value) }
                })
        }
        // A binding-like observer that writes back into the store from inside a delivery.
        tokens.append(
            store.observe(Path(["w0"]), in: "m") { change in
                _ = try? store.set(change.value ?? .null, at: Path(["mirror"]), in: "m")
            })
        let torn = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)

        onThreads(writers + 2) { index in
            switch index {
            case 0..<writers:
                let member = Path(["w\(index)"])
                for step in 1...writesPerWriter {
                    do {
                        try store.set(.int(step), at: member, in: "m")
                        if step.isMultiple(of: 10) {
                            // Two members changed atomically: readers must never see them differ.
                            try store.write("m") { (editor) throws(StoreError) in
                                let next = (try editor.value(at: Path(["a"])).doubleValue ?? 0) + 1
                                try editor.set(.double(next), at: Path(["a"]))
                                try editor.set(.double(next), at: Path(["b"]))
                            }
                            try store.append(.int(step), to: Path(["log"]), in: "m")
                        }
                    } catch {
                        Issue.record("write failed: \(error)")
                    }
                }
            case writers:
                // A reader taking consistent cuts while the writers run.
                var lastSequence: UInt64 = 0
                while !stop.load(ordering: .relaxed) {
                    let cut = store.snapshot(models: nil)
                    if cut.sequence < lastSequence { torn.add(1, ordering: .relaxed) }
                    lastSequence = cut.sequence
                    if let value = cut.models.first?.value, value["a"] != value["b"] { torn.add(1, ordering: .relaxed) }
                }
            default:
                // Observers coming and going while commits are delivered.
                while !stop.load(ordering: .relaxed) {
                    let token = store.observe(Path(["a"]), in: "m") { _ in }
                    token.cancel()
                    _ = store.observeAll { _ in }
                }
            }
            if index == writers - 1 { stop.store(true, ordering: .relaxed) }
        }
        // The last writer may finish before the others; make sure the helper threads stopped.
        stop.store(true, ordering: .relaxed)
        #expect(store.waitUntilDelivered())

        #expect(torn.load(ordering: .relaxed) == 0)
        // Every commit after the first `put` (made before observeAll), once and in order.
        let seen = sequences.withLock { $0 }
        #expect(seen.first == 1_002 && seen.last == store.lastSequence)
        #expect(seen.count == Int(store.lastSequence - 1_001))
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 + 1 == $1 }, "observeAll saw commits out of order")
        for (writer, values) in perWriter.withLock({ $0 }).enumerated() {
            #expect(values.count == writesPerWriter, "writer \(writer)'s observer missed writes")
            #expect(values == Array((1...writesPerWriter).prefix(values.count)), "writer \(writer)'s changes out of order")
        }
        let final = try store.value(of: "m")
        #expect(final["mirror"] == final["w0"])
        #expect(final["a"] == .double(Double(writers * writesPerWriter / 10)))
        #expect(final["log"]?.arrayValue?.count == writers * writesPerWriter / 10)
        all.cancel()
        tokens.removeAll()
    }

    /// Without a log, the durable feed (the server's SSE feed) hears each commit from its writer, under
    /// the store's lock: every one once and in sequence order, whatever thread wrote it, each by the
    /// time its write returns, and with a binding-like observer writing back from inside a delivery.
    @Test func theDurableFeedWithoutALogHearsEveryCommitOnceInOrderBeforeItsWriteReturns() throws {
        let writers = 4, writesPerWriter = 500
        let store = Store()
        let members = (0..<writers).map { (key: "w\($0)", value: JSON.int(0)) } + [(key: "mirror", value: JSON.int(0))]
        try store.put("m", .object(.init(uniqueKeysWithValues: members)))
        let fed = TestLocked<[UInt64]>([])
        let late = Atomic<Int>(0)
        let feed = store.observeDurable { commits in fed.withLock { $0 += commits.map(\.sequence) } }
        let mirror = store.observe(Path(["w0"]), in: "m") { change in
            _ = try? store.set(change.value ?? .null, at: Path(["mirror"]), in: "m")
        }
        onThreads(writers) { index in
            let member = Path(["w\(index)"])
            for step in 1...writesPerWriter {
                guard let result = try? store.set(.int(step), at: member, in: "m") else { continue }
                if !fed.withLock({ $0.contains(result.sequence) }) { late.add(1, ordering: .relaxed) }
            }
        }
        #expect(store.waitUntilDelivered())
        let seen = fed.withLock { $0 }
        #expect(late.load(ordering: .relaxed) == 0, "a write returned before the feed heard its commit")
        #expect(seen.first == 2 && seen.last == store.lastSequence)
        #expect(seen.count == Int(store.lastSequence - 1))
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 + 1 == $1 }, "the feed heard commits out of order")
        feed.cancel()
        mirror.cancel()
    }

    /// A writer runs the calls of its own write, and returns while an observer of another thread's
    /// write (queued while it was delivering) is still blocked: that call runs on the relay thread.
    @Test func aWriterDoesNotRunObserversOfOtherThreadsWrites() throws {
        let store = Store()
        try store.put("a", ["x": 0])
        try store.put("b", ["x": 0])
        let inA = DispatchSemaphore(value: 0), releaseA = DispatchSemaphore(value: 0)
        let releaseB = DispatchSemaphore(value: 0), bDone = DispatchSemaphore(value: 0)
        let aReturned = DispatchSemaphore(value: 0), bReturned = DispatchSemaphore(value: 0)
        let threads = TestLocked<(a: UInt, b: UInt, observerOfB: UInt)>((0, 0, 0))
        let tokenA = store.observe(Path(["x"]), in: "a") { _ in
            inA.signal()
            releaseA.wait()
        }
        let tokenB = store.observe(Path(["x"]), in: "b") { _ in
            threads.withLock { $0.observerOfB = Store.currentThread }
            releaseB.wait()
            bDone.signal()
        }
        // The writers stay alive to the end, so that no thread made meanwhile can take their ids.
        let finish = DispatchSemaphore(value: 0)
        defer {
            finish.signal()
            finish.signal()
        }
        Thread {
            threads.withLock { $0.a = Store.currentThread }
            _ = try? store.set(1, at: Path(["x"]), in: "a")
            aReturned.signal()
            finish.wait()
        }.start()
        #expect(inA.wait(timeout: .now() + 10) == .success)
        // Writer A is delivering its own call: B's write is committed and its call queued behind it.
        Thread {
            threads.withLock { $0.b = Store.currentThread }
            _ = try? store.set(1, at: Path(["x"]), in: "b")
            bReturned.signal()
            finish.wait()
        }.start()
        #expect(bReturned.wait(timeout: .now() + 10) == .success)
        releaseA.signal()
        // A returns although B's observer has not been let go (before, A ran it and hung here).
        #expect(aReturned.wait(timeout: .now() + 10) == .success)
        releaseB.signal()
        #expect(bDone.wait(timeout: .now() + 10) == .success)
        let seen = threads.withLock { $0 }
        #expect(seen.observerOfB != seen.a && seen.observerOfB != seen.b && seen.observerOfB != 0)
        #expect(store.waitUntilDelivered())
        // With nobody else writing, a writer delivers its own calls, on its own thread, before it returns.
        let own = TestLocked<[Int]>([])
        let tokenC = store.observe(Path(["y"]), in: "a") { change in
            if case .int(let value)? = change.value { own.withLock { $0.append(value) } }
        }
        try store.set(7, at: Path(["y"]), in: "a")
        #expect(own.withLock { $0 } == [7])
        _ = (tokenA, tokenB, tokenC)
    }

    @Test func concurrentPutsAndDropsKeepSequencesUnique() throws {
        let store = Store()
        let results = TestLocked<[UInt64]>([])
        onThreads(4) { index in
            for step in 0..<200 {
                do {
                    let name = "model-\(index)-\(step % 5)"
                    let put = try store.put(name, ["step": .int(step)])
                    let drop = try store.drop(name)
                    results.withLock { $0.append(contentsOf: [put.result.sequence, drop.sequence]) }
                } catch {
                    Issue.record("\(error)")
                }
            }
        }
        let sequences = results.withLock { $0 }
        #expect(Set(sequences).count == sequences.count)
        #expect(sequences.max() == store.lastSequence)
        #expect(store.modelNames().isEmpty)
    }
}
