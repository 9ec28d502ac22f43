extension Store {
    /// Records the single edit `commitEdit` just applied to `entry`; when the journal refuses it,
    /// undoes the edit and rethrows, so the model is as it was.
    func record(_ change: Change, undo: UndoStep, of entry: ModelEntry, model: String, revision: UInt64,
                sequence: UInt64, in journal: any StoreJournal) throws(StoreError) {
        do throws(StoreError) {
            try journal.record(Commit(sequence: sequence, model: model, revision: revision, kind: .changes([change])),
                               document: entry.document)
        } catch {
            var editor = ModelEditor(document: .null, changes: [], undoLog: [undo])
            swap(&editor.document, &entry.document)
            editor.rollback()
            swap(&editor.document, &entry.document)
            throw error
        }
    }
}
