import LiveBindEngine
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
    /// The event id of the write that made that commit (its own sequence, or the last of a write to
    /// several models): what a snapshot of the mirror is at, so that no id inside such a write is sent.
    var eventID: UInt64
    /// The streams with a location in this model.
    var subscribers: Set<Int> = []
    /// The views of its arrays that streams show.
    var views: [SharedView.Key: SharedView] = [:]
    /// The commits it took while new views were arranged from it outside the hub's lock; while any
    /// are, the mirror stays, with no subscriber too.
    var journal = ViewJournal()

    /// The value at `path`, nil when there is none.
    func value(at path: Path) -> JSON? {
        try? document?.value(at: path)
    }

    /// The value `change` replaces or removes, if any. The hub keeps it until its lock is released:
    /// freeing a replaced array (a node per element, when the mirror held its last reference) is work
    /// in proportion to it.
    func value(replacedBy change: Change) -> JSON? {
        switch change.kind {
        case .set, .remove, .replace:
            guard let value = value(at: change.path) else { return nil }
            guard let index = change.index else { return value }
            guard let elements = value.arrayValue, elements.indices.contains(index) else { return nil }
            return elements[index]
        case .insert, .move:
            return nil
        }
    }

    /// Applies one change of a published commit, in place.
    mutating func apply(_ change: Change) throws(StoreError) {
        guard document != nil else { throw .modelNotFound("") }
        try document!.replay(change)
    }
}
