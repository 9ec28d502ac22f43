import LiveBindEngine
/// A view of an array (`sub=…;where=…;order=…`) kept by the event hub for every stream that subscribes
/// to it: one ``ArrangedArray`` per model, location and query, however many streams show it, so a
/// change costs the view O(log n) once and its event is encoded once. Guarded by the hub's lock
/// (`ModelMirror.views`); made when its first stream opens, dropped with its last.
final class SharedView: @unchecked Sendable {
    /// What tells views apart: where the array is, and the query.
    struct Key: Hashable, Sendable {
        var path: Path
        var query: ViewQuery
    }

    let key: Key
    private(set) var arranged: ArrangedArray
    /// The streams showing it.
    var streams = 0
    /// What the commit being delivered did to the shown rows so far (emptied once its streams have them).
    var pending: [LocationChange] = []
    /// Set when its array was replaced by one too long to arrange under the hub's lock: `arranged` is
    /// empty and takes no change until the array, arranged outside the lock, is installed (see
    /// `EventHub+Rearranging`); its streams wait for its snapshot meanwhile.
    private(set) var isStale = false
    /// The mirror's sequence the array being arranged outside the lock was taken at; nil while no
    /// arrangement is under way (a stale view not yet handed out, or a current one).
    var rearranging: UInt64?
    /// The tree a reset let go of, to be freed outside the lock with the arrangement (freeing a node per
    /// element is work in proportion to the array too).
    private(set) var discarded: ArrangedArray?
    /// Arrays up to this many elements are arranged under the hub's lock when replaced (a few
    /// milliseconds at most); longer ones outside it.
    static let arrangedUnderLock = 4096

    /// The view of the array at `key.path` in `mirror`: arranged now when the array is short
    /// (`arrangedUnderLock`), else stale, to be arranged outside the lock (``isStale``).
    convenience init(_ key: Key, in mirror: ModelMirror) {
        if Self.count(at: key.path, in: mirror) > Self.arrangedUnderLock {
            self.init(key, arranged: ArrangedArray([], query: key.query))
            isStale = true
        } else {
            self.init(key, arranged: Self.arrange(key, in: mirror.document))
        }
    }

    /// The view `arranged` already holds (see `EventHub.arrangeViews`).
    init(_ key: Key, arranged: ArrangedArray) {
        self.key = key
        self.arranged = arranged
    }

    /// The array at `key.path` in `document`, arranged (O(n log n)).
    static func arrange(_ key: Key, in document: JSON?) -> ArrangedArray {
        ArrangedArray(elements(at: key.path, in: document), query: key.query)
    }

    /// Brings `arranged`, made from the mirror at `sequence`, up to `mirror` with the commits after it
    /// (`mirror.journal`, at most `ViewJournal.limit`); returns the changes it applied (O(log n) each),
    /// or nil when that cannot be done change by change (the journal lost some, the array was replaced,
    /// or the counts disagree at the end): the view must be arranged again. No stream has seen the
    /// view yet, so the changes it makes on the way go nowhere.
    static func catchUp(_ arranged: ArrangedArray, _ key: Key, from sequence: UInt64, to mirror: ModelMirror) -> Int? {
        guard let commits = mirror.journal.commits(after: sequence) else { return nil }
        var applied = 0
        for commit in commits {
            guard case .changes(let changes) = commit.kind else { return nil }
            for change in changes {
                switch effect(of: change, on: key.path) {
                case .none: break
                case .reset: return nil
                case .apply:
                    _ = arranged.apply(change, at: key.path)
                    applied += 1
                }
            }
        }
        return arranged.contentCount == count(at: key.path, in: mirror) ? applied : nil
    }

    /// Takes in one change just applied to `mirror`: the shown rows' changes go to ``pending``. Returns
    /// how many elements it arranged anew (a reset's; a change inside the array costs O(log n) and
    /// counts none). A stale view takes nothing: its arrangement catches up with the mirror's journal.
    func take(_ change: Change, in mirror: ModelMirror) -> Int {
        guard !isStale else { return 0 }
        switch Self.effect(of: change, on: key.path) {
        case .none: return 0
        case .reset: return reset(in: mirror)
        case .apply:
            pending += arranged.apply(change, at: key.path).map { LocationChange(change: $0) }
            // A change that did not fit (the view and the mirror disagree): arrange the mirror's array.
            if arranged.contentCount != Self.count(at: key.path, in: mirror) { return reset(in: mirror) }
            return 0
        }
    }

    /// What one change does to a view of the array at `path`.
    enum Effect { case none, apply, reset }

    /// A change inside the array (an element added, removed, moved, or changed inside) applies to the
    /// view row by row; one that sets or removes the array itself, or an ancestor of it in a way that
    /// reaches below, means arranging it again; any other leaves it alone.
    static func effect(of change: Change, on path: Path) -> Effect {
        if path.isPrefix(of: change.path) {
            return change.path == path && change.index == nil && change.from == nil ? .reset : .apply
        }
        return change.path.isPrefix(of: path) && Subscription.reaches(change, below: path) ? .reset : .none
    }

    /// Arranges the array as `mirror` holds it now: a `set` of the shown rows (`exists` false when
    /// nothing is at the location, as its snapshot would say). Returns the elements arranged. An array
    /// longer than `arrangedUnderLock` is not arranged here: the view turns stale, drops what the commit
    /// did to it so far, and its streams get a snapshot once it is arranged outside the lock.
    @discardableResult
    func reset(in mirror: ModelMirror) -> Int {
        guard !isStale else { return 0 }
        let count = Self.count(at: key.path, in: mirror)
        guard count <= Self.arrangedUnderLock else {
            isStale = true
            pending = []
            discarded = arranged
            arranged = ArrangedArray([], query: key.query)
            return 0
        }
        let exists = mirror.value(at: key.path) != nil
        pending += arranged.reset(Self.elements(at: key.path, in: mirror.document), path: key.path).map {
            LocationChange(change: $0, exists: exists)
        }
        return count
    }

    /// Hands the tree a reset let go of to whoever frees it outside the lock.
    func takeDiscarded() -> ArrangedArray? {
        defer { discarded = nil }
        return discarded
    }

    /// Puts in place the array arranged outside the lock and caught up with the mirror: the view is
    /// current again.
    func install(_ made: ArrangedArray) {
        arranged = made
        isStale = false
        rearranging = nil
    }

    /// Where the view's window is: its offset, and how many elements match.
    var position: Window.Position {
        Window.Position(offset: key.query.offset, length: arranged.matchCount)
    }

    /// Elements of the array at `path` in `mirror` (0 when there is none), without copying it.
    static func count(at path: Path, in mirror: ModelMirror) -> Int {
        mirror.value(at: path)?.arrayValue?.count ?? 0
    }

    private static func elements(at path: Path, in document: JSON?) -> [JSON] {
        guard case .array(let elements)? = try? document?.value(at: path) else { return [] }
        return Array(elements)
    }
}
