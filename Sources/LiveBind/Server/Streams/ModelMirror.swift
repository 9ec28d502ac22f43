/// A model as the event hub last published it, kept while streams subscribe to locations in it: what a
/// location holds after each change, which the change alone does not say (an array shifted under a
/// location, the rows entering a window). Guarded by the hub's lock.
///
/// It starts as the store's document (shared, copy on write) and is changed by replaying each published
/// commit, so it costs one copy of the containers the commits touch, once.
struct ModelMirror {
    /// The model's document; nil while the model does not exist.
    var document: JSON?
    /// The model's revision after the last commit applied.
    var revision: UInt64
    /// Every commit up to this sequence is in `document`.
    var sequence: UInt64
    /// The streams with a location in this model.
    var subscribers: Set<Int> = []
    /// The views of its arrays that streams show.
    var views: [SharedView.Key: SharedView] = [:]
    /// New views being arranged from it outside the hub's lock (see `EventHub.arrangeViews`): while
    /// there are any, the mirror stays (with no subscriber too) and keeps the commits it takes in
    /// `journal`, which those views catch up with.
    var arranging = 0
    /// The commits applied since the first view still being arranged started; nil once more than
    /// `journalLimit` came, or more than `journalByteLimit` bytes of their events (those views are then
    /// arranged again from the mirror, under the lock).
    var journal: [Commit]? = []
    var journalBytes = 0
    static let journalLimit = 4096
    static let journalByteLimit = 16 << 20

    /// Keeps `commit` (whose event is `bytes` long) for the views being arranged, if any.
    mutating func record(_ commit: Commit, bytes: Int) {
        guard arranging > 0, journal != nil else { return }
        journalBytes += bytes
        if journal!.count >= Self.journalLimit || journalBytes > Self.journalByteLimit { journal = nil } else { journal!.append(commit) }
    }

    /// Starts an empty journal.
    mutating func clearJournal() {
        journal = []
        journalBytes = 0
    }

    /// The value at `path`, nil when there is none.
    func value(at path: Path) -> JSON? {
        try? document?.value(at: path)
    }

    /// Applies one change of a published commit, in place.
    mutating func apply(_ change: Change) throws(StoreError) {
        guard document != nil else { throw .modelNotFound("") }
        try document!.replay(change)
    }
}
