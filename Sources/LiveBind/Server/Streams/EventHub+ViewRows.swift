import LiveBindEngine
internal import LiveBindHTTP
/// `--max-view-rows` as arrays grow.
///
/// A view is counted when it is made (`checkViews`), but its array can grow afterwards: many views
/// made on small arrays would otherwise end up arranging far more rows than the limit (each costs
/// about 200 bytes), up to the store's limits times `--max-views`. So after a commit to a model with
/// views, all views together are counted again; past the limit the model's largest views go, and the
/// streams showing them end (a client that reconnects for such a view gets 503 naming the setting).
extension EventHub {
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
            state.viewCount -= 1
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
