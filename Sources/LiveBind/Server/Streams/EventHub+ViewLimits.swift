import LiveBindEngine
internal import LiveBindHTTP
/// `--max-views` and `--max-view-rows`, when views are made and as arrays grow (the counts are the
/// `ViewCensus`'s, the rows the views' own).
///
/// A view is counted when it is made (`checkViews`), but its array can grow afterwards: many views
/// made on small arrays would otherwise end up arranging far more rows than the limit (each costs
/// about 200 bytes), up to the store's limits times `--max-views`. So after a commit to a model with
/// views, all views together are counted again; past the limit the model's largest views go, and the
/// streams showing them end (a client that reconnects for such a view gets 503 naming the setting).
extension EventHub {
    /// Throws when the new views among `locations` would take the streams past `--max-views` distinct
    /// views, or past `--max-view-rows` elements arranged by all views together (each view holds a
    /// node per element of its array: about 200 bytes), with the views requests are arranging (but
    /// those in `reserved`, the caller's own).
    func checkViews(_ locations: [Subscription], in state: State, reserved: [ArrangedView] = []) throws(RequestError) {
        var added: [SharedView.Key: Int] = [:]
        for location in locations {
            guard let query = location.view else { continue }
            let key = SharedView.Key(path: location.path, query: query)
            guard state.mirrors[location.model]?.views[key] == nil, added[key] == nil else { continue }
            let value =
                state.mirrors[location.model].map { $0.value(at: location.path) }
                ?? (try? store.value(of: location.model, at: location.path))
            added[key] = value?.arrayValue?.count ?? 0
        }
        guard !added.isEmpty else { return }
        try state.views.check(adding: added.count, reserved: reserved.count)
        var rows = added.values.reduce(0, +)
        for mirror in state.mirrors.values { for view in mirror.views.values { rows += view.arranged.contentCount } }
        try state.views.check(rows: rows, reserved: reserved.reduce(0) { $0 + $1.rows })
    }

    /// Drops views of `mirror` (of `model`, just committed to) until all views arrange at most
    /// `maxViewRows` elements; ends their streams (woken into `wake`). Called by `deliver` with the
    /// lock held, with `mirror` taken out of `state.mirrors`.
    func keepViewRows(
        of model: String, _ mirror: inout ModelMirror, in state: inout State,
        waking wake: inout [any HTTPStreamConnection]
    ) {
        guard !mirror.views.isEmpty else { return }
        var rows = mirror.views.values.reduce(0) { $0 + $1.arranged.contentCount }
        for other in state.mirrors.values { rows = other.views.values.reduce(rows) { $0 + $1.arranged.contentCount } }
        guard rows > settings.maxViewRows else { return }
        for view in mirror.views.values.sorted(by: { $0.arranged.contentCount > $1.arranged.contentCount }) {
            guard rows > settings.maxViewRows else { break }
            rows -= view.arranged.contentCount
            mirror.views[view.key] = nil
            state.views.shown -= 1
            var ended: [Int] = []
            for id in mirror.subscribers {
                guard let subscriber = state.subscribers[id] else { continue }
                let before = subscriber.subscriptions.count
                // Its locations let go of the view now, so that a view made again with the same key
                // is not counted off when this stream closes.
                subscriber.subscriptions.removeAll { $0.model == model && $0.view == view.key.query && $0.path == view.key.path }
                guard subscriber.subscriptions.count < before else { continue }
                subscriber.end()
                ended.append(id)
            }
            wakeAll(ended, in: &state, into: &wake)
        }
    }
}
