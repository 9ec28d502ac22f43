import Synchronization

/// Named JSON models, their changes and their observers. Safe to use from any thread.
///
/// Every write is atomic and all-or-nothing; a write that changes something gets a store-wide, strictly
/// increasing sequence number and bumps its model's revision. Observers are called after the store's
/// lock is released, in commit order, one at a time: on the writing thread, or on whichever thread is
/// already delivering (a write made from inside an observer is committed at once and delivered after
/// the current delivery). A writer runs the calls of its own write and of the writes those calls
/// make; when calls of other threads' writes are waiting after them, the store's delivery thread
/// runs those, so that a writer never waits for observers of writes it did not make.
public final class Store: Sendable {
    /// Every model and observer; only through ``withState(_:)``.
    private let state: OrderedMutex<StoreState>
    /// Takes every commit and makes it durable (see `CommitLog`); nil keeps the store in memory.
    package let log: (any CommitLog)?
    /// Who delivers: `DeliveryState` bits. Set and read under the lock, except that the deliverer of a
    /// single call ends its delivery without taking the lock again (see `Store+Delivery.swift`).
    let delivery = Atomic<UInt8>(0)
    /// What every write is checked against.
    public let limits: StoreLimits
    /// Delivers what other threads' writes queued once a writer has run its own calls.
    let relay = DeliveryRelay()
    /// Told when a delivery ends, for ``waitUntilDelivered(timeout:)``.
    let deliveryEnded = WaitSignal()

    /// An empty store whose first commit gets sequence `startingSequence + 1`, and whose writes are
    /// checked against `limits` (`maxDepth` must be in `1...StoreLimits.depthCeiling`).
    public init(startingSequence: UInt64 = 0, limits: StoreLimits = StoreLimits()) {
        Self.check(limits)
        state = OrderedMutex(StoreState(lastSequence: startingSequence))
        log = nil
        self.limits = limits
    }

    /// A store holding `models` as they were recorded, whose every commit goes to `log`.
    package init(
        restoring models: [ModelSnapshot], lastSequence: UInt64, log: any CommitLog,
        limits: StoreLimits = StoreLimits()
    ) {
        Self.check(limits)
        state = OrderedMutex(StoreState(restoring: models, lastSequence: lastSequence))
        self.log = log
        self.limits = limits
        log.attach(to: self)
    }

    deinit {
        relay.stop()
    }

    /// Runs `body` with the store's state locked.
    @inline(__always)
    func withState<R: Sendable, E: Error>(_ body: (inout StoreState) throws(E) -> R) throws(E) -> R {
        try state.withLock { (state) throws(E) -> R in try body(&state) }
    }

    private static func check(_ limits: StoreLimits) {
        precondition(
            (1...StoreLimits.depthCeiling).contains(limits.maxDepth),
            "StoreLimits.maxDepth must be 1...\(StoreLimits.depthCeiling)")
        precondition(
            limits.maxModelBytes > 0 && limits.maxStoreBytes > 0 && limits.maxPatchOperations > 0,
            "StoreLimits must be positive")
    }

    /// The counted size of `model` in bytes: its compact JSON plus one separator per member and element,
    /// as checked against ``StoreLimits/maxModelBytes``. Kept up to date by every write.
    public func size(of model: String) throws(StoreError) -> Int {
        try withState { (state) throws(StoreError) -> Int in try state.entry(of: model).size }
    }

    /// The counted size of all models together, each with ``StoreLimits/modelOverhead``, as checked
    /// against ``StoreLimits/maxStoreBytes``.
    public var totalSize: Int {
        withState { $0.totalSize }
    }

    /// The sequence number of the latest commit (or `startingSequence` before any).
    public var lastSequence: UInt64 {
        withState { $0.lastSequence }
    }

    /// Every model's name and revision, sorted by name.
    public func modelNames() -> [(name: String, revision: UInt64)] {
        withState { state in
            state.entries.compactMap { name, entry in entry.exists ? (name: name, revision: entry.revision) : nil }
        }.sorted { $0.name < $1.name }
    }

    /// The value at `path` in `model`.
    public func value(of model: String, at path: Path = .root) throws(StoreError) -> JSON {
        let document = try withState { (state) throws(StoreError) -> JSON in
            try state.entry(of: model).document
        }
        return try document.value(at: path)
    }

    /// The whole of `model` with its revision.
    public func snapshot(_ model: String) throws(StoreError) -> ModelSnapshot {
        try withState { (state) throws(StoreError) -> ModelSnapshot in
            let entry = try state.entry(of: model)
            return ModelSnapshot(name: model, revision: entry.revision, value: entry.document)
        }
    }

    /// One consistent cut: the snapshots (sorted by name; unknown names are skipped) and the sequence
    /// they were taken at. `nil` means every model.
    public func snapshot(models: [String]?) -> (sequence: UInt64, models: [ModelSnapshot]) {
        let (sequence, snapshots) = withState { state in (state.lastSequence, state.snapshots(models)) }
        return (sequence, snapshots.sorted { $0.name < $1.name })
    }

    /// Whether `name` is a valid model name: 1 to 128 characters from `A-Z a-z 0-9 _ -`.
    ///
    /// No dot: a dotted key path's first component names the model (`sensor.readings.3`).
    public static func isValidModelName(_ name: String) -> Bool {
        let bytes = name.utf8
        guard !bytes.isEmpty, bytes.count <= 128 else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                true
            default:
                false
            }
        }
    }

    /// Creates `model` or replaces its whole value (which must be an object).
    ///
    /// With `ifRevision`, the model must be at that revision; `0` means "must not exist yet".
    /// Observers of the model hear a `set` at the root; store observers get a `snapshot` commit.
    @discardableResult
    public func put(_ model: String, _ value: JSON, ifRevision: UInt64? = nil) throws(StoreError) -> (
        created: Bool, result: WriteResult
    ) {
        guard Self.isValidModelName(model) else { throw .invalidModelName(model) }
        guard case .object = value else { throw .typeMismatch(path: .root, expected: "object", found: value.typeName) }
        // Measured before the lock: the walk is as long as the value.
        let measuredSize = try value.measure(at: 0, maxDepth: limits.maxDepth)
        let (outcome, pending) = try withState {
            (state) throws(StoreError) -> ((created: Bool, result: WriteResult), DeliveryBatch?) in
            let existing = state.lookUp(model)
            let existed = existing?.exists ?? false
            let revision = existing?.revision ?? 0
            if let expected = ifRevision, expected != revision {
                throw .revisionMismatch(expected: expected, actual: revision)
            }
            var value = value, size = measuredSize
            if let rules = state.rules(of: model) {
                value = try rules.validated(value, at: .root, in: .null)
                size = try value.measure(at: 0, maxDepth: limits.maxDepth)
            }
            let totalDelta = try state.checkGrowth(to: size, from: existed ? existing?.size : nil, limits: limits)
            if existed, existing?.document == value {
                return ((false, WriteResult(sequence: state.lastSequence, revision: revision, changed: false)), nil)
            }
            if log != nil, let refusal = state.durable.refusal { throw .storageFailed(refusal) }
            let entry = state.makeEntry(for: model)
            try prepareLog(for: entry, &state)
            state.lastSequence += 1
            entry.exists = true
            entry.document = value
            entry.revision = revision + 1
            entry.size = size
            state.totalSize += totalDelta
            state.enqueue(Change(kind: .set, path: .root, value: value), for: entry)
            state.enqueue(Commit(sequence: state.lastSequence, model: model, revision: revision + 1, kind: .snapshot(value)))
            appendToLog(
                Commit(sequence: state.lastSequence, model: model, revision: revision + 1, kind: .snapshot(value)),
                of: entry, state)
            let result = state.changedResult(revision: revision + 1)
            return ((!existed, result), claimDelivery(&state))
        }
        if let pending { deliver(pending) }
        return outcome
    }

    /// Deletes `model`. Observers of the model hear a `remove` at the root; store observers a `drop`.
    @discardableResult
    public func drop(_ model: String, ifRevision: UInt64? = nil) throws(StoreError) -> WriteResult {
        let (result, pending) = try withState { (state) throws(StoreError) -> (WriteResult, DeliveryBatch?) in
            let entry = try state.entry(of: model)
            let revision = try state.revision(of: entry, ifRevision: ifRevision)
            try prepareLog(for: entry, &state)
            state.lastSequence += 1
            state.enqueue(Change(kind: .remove, path: .root), for: entry)
            state.enqueue(Commit(sequence: state.lastSequence, model: model, revision: revision + 1, kind: .drop))
            entry.exists = false
            entry.document = .null
            entry.revision = 0
            state.totalSize -= entry.size + StoreLimits.modelOverhead
            entry.size = 0
            appendToLog(Commit(sequence: state.lastSequence, model: model, revision: revision + 1, kind: .drop), of: entry, state)
            // With a log, the entry holds what clients see until the drop is durable.
            if entry.observers.isEmpty && entry.durable == nil { state.removeEntry(model) }
            let result = state.changedResult(revision: revision + 1)
            return (result, claimDelivery(&state))
        }
        if let pending { deliver(pending) }
        return result
    }

    /// Several edits to `model` as one atomic commit (one sequence number; a `batch` on the wire).
    ///
    /// If `edit` throws, every edit it made is undone and the error is rethrown.
    /// > Important: `edit` runs while the store is locked: it must not call the store.
    @discardableResult
    public func write(
        _ model: String, ifRevision: UInt64? = nil, _ edit: (inout ModelEditor) throws(StoreError) -> Void
    ) throws(StoreError) -> WriteResult {
        let (result, pending) = try withState { (state) throws(StoreError) -> (WriteResult, DeliveryBatch?) in
            let entry = try state.entry(of: model)
            let revision = try state.revision(of: entry, ifRevision: ifRevision)
            try prepareLog(for: entry, &state)
            // Take the document and the scratch buffers out of the state so they stay uniquely referenced.
            var editor = ModelEditor(
                document: .null, changes: state.takeScratchChanges(), undoLog: state.takeScratchUndo(), limits: limits,
                rules: state.rules(of: model) ?? [], baseSize: entry.size, othersSize: state.totalSize - entry.size)
            swap(&editor.document, &entry.document)
            do throws(StoreError) {
                try edit(&editor)
            } catch {
                editor.rollback()
                swap(&editor.document, &entry.document)
                state.returnScratch(changes: &editor.changes, undoLog: &editor.undoLog)
                throw error
            }
            swap(&editor.document, &entry.document)
            guard !editor.changes.isEmpty else {
                state.returnScratch(changes: &editor.changes, undoLog: &editor.undoLog)
                return (WriteResult(sequence: state.lastSequence, revision: revision, changed: false), nil)
            }
            state.lastSequence += 1
            entry.revision = revision + 1
            entry.size += editor.sizeDelta
            state.totalSize += editor.sizeDelta
            if !entry.observers.isEmpty {
                for change in editor.changes { state.enqueue(change, for: entry) }
            }
            if !state.commitObservers.isEmpty {
                state.enqueue(Commit(sequence: state.lastSequence, model: model, revision: revision + 1, kind: .changes(editor.changes)))
            }
            appendToLog(
                Commit(sequence: state.lastSequence, model: model, revision: revision + 1, kind: .changes(editor.changes)),
                of: entry, state)
            let result = state.changedResult(revision: revision + 1, index: editor.appendedIndex)
            state.returnScratch(changes: &editor.changes, undoLog: &editor.undoLog)
            return (result, claimDelivery(&state))
        }
        if let pending { deliver(pending) }
        return result
    }

    /// Applies one edit to `model` and commits it: the fast path of the single-edit methods, with no
    /// undo log (a single edit throws before it changes anything), no change list unless a store
    /// observer needs one, and no queue when the store is idle and one observer hears the change.
    ///
    /// `depth` says how deep in a chain of binding writes this one is (see `ChangeStamp.depth`);
    /// `inDelivery` that it is made on the delivering thread from inside an observer call (see
    /// `claimNestedDelivery`).
    ///
    /// Inlined into each caller, so that each gets a copy specialized for its edit closure (a shared,
    /// closure-taking copy cost about 200 instructions more per set).
    @inline(__always)
    func commitEdit(
        _ model: String, ifRevision: UInt64?, depth: Int = 0, inDelivery: Bool = false,
        _ edit: (inout JSON, borrowing EditContext, inout Int) throws(StoreError) -> Change?
    ) throws(StoreError) -> WriteResult {
        let (result, pending) = try withState { (state) throws(StoreError) -> (WriteResult, PendingDelivery) in
            let entry = try state.entry(of: model)
            let revision = try state.revision(of: entry, ifRevision: ifRevision)
            try prepareLog(for: entry, &state)
            let context = EditContext(
                limits: limits, rules: state.rules(of: model), modelSize: entry.size,
                totalSize: state.totalSize)
            var sizeDelta = 0
            guard let change = try edit(&entry.document, context, &sizeDelta) else {
                return (WriteResult(sequence: state.lastSequence, revision: revision, changed: false), .none)
            }
            state.lastSequence += 1
            entry.revision = revision + 1
            if sizeDelta != 0 {
                entry.size += sizeDelta
                state.totalSize += sizeDelta
            }
            let index = change.kind == .insert ? change.index : nil
            let result = state.changedResult(revision: revision + 1, index: index)
            appendToLog(
                Commit(
                    sequence: state.lastSequence, model: model, revision: revision + 1, kind: .changes([change]),
                    depth: depth),
                of: entry, state)
            // Path observers first, then store observers (as `write` and `put` do); the change is moved
            // rather than copied when only path observers hear it.
            if state.commitObservers.isEmpty {
                if entry.observers.isEmpty { return (result, .none) }
                if let box = inDelivery
                    ? claimNestedDelivery(at: change.path, for: entry, depth: depth)
                    : claimSingleDelivery(at: change.path, for: entry, &state)
                {
                    return (result, .single(box, change, ChangeStamp(order: result.order, depth: depth)))
                }
                state.enqueue(consume change, for: entry, depth: depth)
            } else {
                if !entry.observers.isEmpty { state.enqueue(change, for: entry, depth: depth) }
                state.enqueue(
                    Commit(sequence: state.lastSequence, model: model, revision: revision + 1, kind: .changes([change])),
                    depth: depth)
            }
            guard let batch = claimDelivery(&state) else { return (result, .none) }
            return (result, .batch(batch))
        }
        switch consume pending {
        case .none: break
        case .single(let box, let change, let stamp):
            if inDelivery { box.deliver(change, stamp) } else { deliver(change, stamp, to: box) }
        case .batch(let batch): deliver(batch)
        }
        return result
    }
}
