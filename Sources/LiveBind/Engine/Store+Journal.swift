// The store's side of durable storage: each commit path calls one of these with the store locked,
// after applying the write and before the sequence moves; a refused commit is undone here.
extension Store {
    /// Records a `put` (nothing was changed yet); when refused, forgets the entry a new model made.
    func recordPut(_ model: String, _ value: JSON, revision: UInt64, existed: Bool, state: inout StoreState,
                   in journal: any StoreJournal) throws(StoreError) {
        do throws(StoreError) {
            try journal.record(Commit(sequence: state.lastSequence + 1, model: model, revision: revision, kind: .snapshot(value)),
                               document: value)
        } catch {
            if !existed, let entry = state.lookUp(model), !entry.exists, entry.observers.isEmpty { state.removeEntry(model) }
            throw error
        }
    }

    /// Records what `write` applied (the document is still in `editor`); when refused, rolls the edits
    /// back, puts the document back in `entry` and returns the scratch buffers.
    func record(_ editor: inout ModelEditor, of entry: ModelEntry, model: String, revision: UInt64,
                state: inout StoreState, in journal: any StoreJournal) throws(StoreError) {
        do throws(StoreError) {
            try journal.record(Commit(sequence: state.lastSequence + 1, model: model, revision: revision,
                                      kind: .changes(editor.changes)),
                               document: editor.document)
        } catch {
            editor.rollback()
            swap(&editor.document, &entry.document)
            state.returnScratch(changes: &editor.changes, undoLog: &editor.undoLog)
            throw error
        }
    }

    /// Records the single edit `commitEdit` just applied to `entry`; when refused, puts `before` back.
    ///
    /// The single-edit fast path keeps no undo step, so with a journal it keeps the document as it was
    /// instead: one copy-on-write of the edited containers, small next to the disk sync that follows.
    func record(_ change: Change, restoring before: JSON, of entry: ModelEntry, model: String, revision: UInt64,
                sequence: UInt64, in journal: any StoreJournal) throws(StoreError) {
        do throws(StoreError) {
            try journal.record(Commit(sequence: sequence, model: model, revision: revision, kind: .changes([change])),
                               document: entry.document)
        } catch {
            entry.document = before
            throw error
        }
    }
}

extension StoreState {
    /// The state of a store reopened from durable storage: the models with their revisions, no observers.
    init(restoring models: [ModelSnapshot], lastSequence: UInt64) {
        self.init(lastSequence: lastSequence)
        for model in models {
            let entry = makeEntry(for: model.name)
            entry.exists = true
            entry.document = model.value
            entry.revision = model.revision
            entry.size = model.value.countedSize
            totalSize += entry.size + StoreLimits.modelOverhead
        }
    }
}
