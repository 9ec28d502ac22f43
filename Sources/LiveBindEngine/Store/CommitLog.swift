/// An ordered, durable log of commits: the seam durable storage plugs into (SQLite in `Persistence/`;
/// a replicated log can implement the same three calls).
///
/// The store applies each commit in memory and appends it here, in sequence order, with its lock held.
/// `append` must not wait for I/O: the log makes commits durable in the background, many at a time
/// (group commit), and reports each durable batch to the store it was attached to, in order, with
/// ``Store/logDidPersist(_:)``. The last commit of a batch carries the sequence number the
/// acknowledgement stands for: every commit up to it is durable. When commits cannot be made durable,
/// the log calls ``Store/logDidFail(_:)`` once and accepts no more appends.
///
/// Until a commit is reported durable, nothing outside the process may see it: the server answers
/// writes, streams events and serves reads only up to the durable sequence. In-process observers
/// (bindings, Swift observers) see commits as they are applied.
///
/// Class-bound, so that the store's hot path checks for a log with a pointer compare.
package protocol CommitLog: AnyObject, Sendable {
    /// Connects the log to the store it serves (held weakly). Called once, before the first append.
    func attach(to store: Store)
    /// Takes `commit`, the next one in sequence order.
    ///
    /// > Important: Called on the writing thread with the store locked: it must not wait for I/O and
    /// must not call the store.
    func append(_ commit: Commit)
    /// Takes `commits`, the next ones in sequence order, as one unit: made durable together (the
    /// same rules as ``append(_:)``).
    func append(contentsOf commits: [Commit])
    /// Returns once everything appended so far is durable or has failed. Must not be called with the
    /// store locked.
    func flush()
}
