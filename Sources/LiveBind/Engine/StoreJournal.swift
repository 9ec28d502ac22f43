/// Where a store records each commit before anyone can see it: the hook durable storage plugs into.
///
/// `record` is called with the store locked, after the write was applied to the document and before
/// the lock is released, so observers, readers and the SSE feed only ever see recorded commits. When
/// it throws, the store undoes the write (model, revision and sequence stay as they were) and the
/// write fails with that error.
///
/// > Important: Called on the writing thread with the store locked: it must not call the store.
///
/// Class-bound, so that the store's hot path checks for a journal with a pointer compare instead of
/// copying an existential box.
protocol StoreJournal: AnyObject, Sendable {
    /// Makes `commit` durable; `document` is the model's whole value after it (`.null` for a drop).
    func record(_ commit: Commit, document: JSON) throws(StoreError)
}
