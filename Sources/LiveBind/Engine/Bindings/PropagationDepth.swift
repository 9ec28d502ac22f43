/// How deep in a chain of binding writes a commit is, so that a loop through bindings of several
/// registries, each unaware of the others' bindings, is stopped (see `BindingCensus.loopLimit`). Loops
/// through one registry's bindings are refused when they are made; chains of any length run to their end.
///
/// A binding's write runs with its depth bound to the writing thread (`writing`); the store stamps
/// that depth into the commit it makes (`Commit.depth`), so that whichever thread delivers the commit
/// knows how deep it is.
enum PropagationDepth {
    /// The depth of the binding write in progress on this thread, if any.
    @TaskLocal static var writing: Int?

    /// Runs a binding's store write at `depth`. Returns the commit's sequence, or `nil` when the write
    /// changed nothing.
    static func write(at depth: Int, _ operation: () throws(StoreError) -> WriteResult) throws(StoreError) -> UInt64? {
        let outcome: Result<WriteResult, StoreError> = $writing.withValue(depth) {
            do throws(StoreError) { return .success(try operation()) } catch { return .failure(error) }
        }
        let result = try outcome.get()
        return result.changed ? result.sequence : nil
    }
}
