/// A write to several models at once: every edit applies, or none does.
extension Store {
    /// One model's part of ``write(_:)``: the edits to make to `model` (which must exist), only if its
    /// revision is `ifRevision` when given.
    public struct ModelEdits {
        /// The model to edit; it must exist.
        public var model: String
        /// The revision the model must be at (nil: any).
        public var ifRevision: UInt64?
        /// The edits, as for ``Store/write(_:ifRevision:_:)``.
        public var edit: (inout ModelEditor) throws(StoreError) -> Void

        /// `edit` for `model`, only at revision `ifRevision` when given.
        public init(_ model: String, ifRevision: UInt64? = nil, _ edit: @escaping (inout ModelEditor) throws(StoreError) -> Void) {
            self.model = model
            self.ifRevision = ifRevision
            self.edit = edit
        }
    }

    /// Edits several models atomically: every model's preconditions hold and every edit applies
    /// (validation rules and limits included; the store's size is checked as each model's edits are
    /// made, with the models before it in `edits`, and the work one write may measure is shared by all
    /// of them), or nothing changes and the error names the model. Each model that changed gets a
    /// commit of its own (its own revision; consecutive sequences), made under one lock and handed to
    /// the commit log as one unit (one transaction on disk, one message in a cluster): no reader ever
    /// sees some of them without the others. They share one event id, the last one's: every model's
    /// result has it as its `sequence`. Returns each model's result, in order. A model may
    /// appear once.
    ///
    /// > Important: the edits run while the store is locked: they must not call the store.
    @discardableResult
    public func write(_ edits: [ModelEdits]) throws(ModelWriteError) -> [WriteResult] {
        var seen = Set<String>()
        for part in edits where !seen.insert(part.model).inserted {
            throw ModelWriteError(model: part.model, error: .invalidValue("model \(part.model) is named twice in one write"))
        }
        let (results, pending) = try withState { (state) throws(ModelWriteError) -> ([WriteResult], DeliveryBatch?) in
            var editors: [(entry: ModelEntry, revision: UInt64, editor: ModelEditor)] = []
            // The store's growth and the work measured so far, across the models: one write's budget.
            var grown = 0, spent = 0
            func undoAll() {
                for index in editors.indices.reversed() {
                    editors[index].editor.rollback()
                    swap(&editors[index].editor.document, &editors[index].entry.document)
                }
            }
            for part in edits {
                do throws(StoreError) {
                    let entry = try state.entry(of: part.model)
                    let revision = try state.revision(of: entry, ifRevision: part.ifRevision)
                    try prepareLog(for: entry, &state)
                    var editor = ModelEditor(
                        document: .null, changes: [], undoLog: [], limits: limits,
                        rules: state.rules(of: part.model) ?? [], baseSize: entry.size,
                        othersSize: state.totalSize + grown - entry.size)
                    editor.measured = spent
                    swap(&editor.document, &entry.document)
                    do throws(StoreError) {
                        try part.edit(&editor)
                    } catch {
                        editor.rollback()
                        swap(&editor.document, &entry.document)
                        throw error
                    }
                    grown += editor.sizeDelta
                    spent = editor.measured
                    editors.append((entry, revision, editor))
                } catch {
                    undoAll()
                    throw ModelWriteError(model: part.model, error: error)
                }
            }
            var results: [WriteResult] = []
            var commits: [(Commit, ModelEntry)] = []
            // One write, one event id: the last commit's, for every model (the store's when none changed).
            let changed = editors.count { !$0.editor.changes.isEmpty }
            let eventID = state.lastSequence + UInt64(changed)
            for (entry, revision, editor) in editors {
                var editor = editor
                swap(&editor.document, &entry.document)
                guard !editor.changes.isEmpty else {
                    results.append(WriteResult(sequence: eventID, revision: revision, changed: false))
                    continue
                }
                state.lastSequence += 1
                entry.revision = revision + 1
                entry.size += editor.sizeDelta
                state.totalSize += editor.sizeDelta
                if !entry.observers.isEmpty {
                    for change in editor.changes { state.enqueue(change, for: entry) }
                }
                var commit = Commit(sequence: state.lastSequence, model: entry.name, revision: revision + 1, kind: .changes(editor.changes))
                commit.unitTail = Int(eventID - state.lastSequence)
                if !state.commitObservers.isEmpty { state.enqueue(commit) }
                commits.append((commit, entry))
                results.append(state.changedResult(sequence: eventID, revision: revision + 1, index: editor.appendedIndex))
            }
            appendUnitToLog(commits, state, results: zip(edits, results).map { ($0.model, $1) })
            return (results, claimDelivery(&state))
        }
        if let pending { deliver(pending) }
        return results
    }
}

/// Why a write to several models changed nothing: `error`, in `model`.
public struct ModelWriteError: Error, Equatable, CustomStringConvertible {
    /// The model whose precondition or edit failed.
    public var model: String
    /// Why.
    public var error: StoreError

    /// "model: reason".
    public var description: String { "\(model): \(error)" }
}
