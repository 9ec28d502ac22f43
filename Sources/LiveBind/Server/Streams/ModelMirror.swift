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
