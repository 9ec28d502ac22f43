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

    /// The view of the array at `key.path` in `document` (no array there: an empty one).
    convenience init(_ key: Key, document: JSON?) {
        self.init(key, arranged: Self.arrange(key, in: document))
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
    /// (`mirror.journal`); false when that cannot be done change by change (the journal lost some, the
    /// array was replaced, or the counts disagree at the end): the view must be arranged again. No
    /// stream has seen the view yet, so the changes it makes on the way go nowhere.
    static func catchUp(_ arranged: ArrangedArray, _ key: Key, from sequence: UInt64, to mirror: ModelMirror) -> Bool {
        guard let commits = mirror.journal.commits(after: sequence) else { return false }
        for commit in commits {
            guard case .changes(let changes) = commit.kind else { return false }
            for change in changes {
                switch effect(of: change, on: key.path) {
                case .none: break
                case .reset: return false
                case .apply: _ = arranged.apply(change, at: key.path)
                }
            }
        }
        return arranged.contentCount == (mirror.value(at: key.path)?.arrayValue?.count ?? 0)
    }

    /// Takes in one change just applied to `mirror`: the shown rows' changes go to ``pending``.
    func take(_ change: Change, in mirror: ModelMirror) {
        switch Self.effect(of: change, on: key.path) {
        case .none: break
        case .reset: reset(in: mirror)
        case .apply:
            pending += arranged.apply(change, at: key.path).map { LocationChange(change: $0) }
            // A change that did not fit (the view and the mirror disagree): arrange the mirror's array.
            if arranged.contentCount != (mirror.value(at: key.path)?.arrayValue?.count ?? 0) { reset(in: mirror) }
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
    /// nothing is at the location, as its snapshot would say).
    func reset(in mirror: ModelMirror) {
        let exists = mirror.value(at: key.path) != nil
        pending += arranged.reset(Self.elements(at: key.path, in: mirror.document), path: key.path).map {
            LocationChange(change: $0, exists: exists)
        }
    }

    /// Where the view's window is: its offset, and how many elements match.
    var position: Window.Position {
        Window.Position(offset: key.query.offset, length: arranged.matchCount)
    }

    private static func elements(at path: Path, in document: JSON?) -> [JSON] {
        guard case .array(let elements)? = try? document?.value(at: path) else { return [] }
        return Array(elements)
    }
}
