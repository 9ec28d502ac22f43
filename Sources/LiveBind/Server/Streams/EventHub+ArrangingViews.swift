import LiveBindEngine
internal import LiveBindHTTP
/// New views are arranged outside the hub's lock.
///
/// Arranging an array is O(n log n): seconds for millions of rows, during which no stream could read
/// and no commit could be published if the lock were held. So a stream's new views are arranged before
/// it registers, from its model's mirror as it was then (kept, with no subscriber too, while views are
/// arranged from it); the mirror keeps the commits it takes meanwhile (`ModelMirror.journal`), and the
/// view catches up with them under the lock when the stream attaches, O(log n) each. Should that not be
/// possible (the journal overflowed, the array was replaced), the view is arranged again under the lock.
extension EventHub {
    /// A view arranged from its model's mirror at `sequence`, outside the lock. Until
    /// `finishArranging`, its `rows` and its place count against `--max-view-rows` and `--max-views`
    /// (`State.views`, see `ViewCensus`), so that requests arranging at once cannot pass them.
    ///
    /// `@unchecked`: its `ArrangedArray` (a class) is made by the thread opening the stream and handed
    /// whole to the hub's state under the lock; no one else ever holds it.
    struct ArrangedView: @unchecked Sendable {
        let model: String
        let key: SharedView.Key
        let arranged: ArrangedArray
        let sequence: UInt64
        let rows: Int
    }

    /// Arranges the views among `locations` that no stream shows yet. Throws as `register` would when
    /// they would pass `--max-views` or `--max-view-rows` (with the views other requests are arranging),
    /// before any work. Every view returned holds its mirror and its share of the limits: pass them to
    /// `finishArranging` once the stream is registered (or refused).
    func arrangeViews(_ locations: [Subscription]) throws(RequestError) -> [ArrangedView] {
        guard locations.contains(where: { $0.view != nil }) else { return [] }
        typealias Source = (model: String, key: SharedView.Key, document: JSON?, sequence: UInt64, rows: Int)
        let sources = try state.withLock { (state) throws(RequestError) -> [Source] in
            try checkViews(locations, in: state)
            var sources: [Source] = []
            for location in locations {
                guard let query = location.view else { continue }
                let key = SharedView.Key(path: location.path, query: query)
                guard state.mirrors[location.model]?.views[key] == nil,
                    !sources.contains(where: { $0.model == location.model && $0.key == key })
                else { continue }
                if state.mirrors[location.model] == nil { state.mirrors[location.model] = makeMirror(location.model, subscribers: []) }
                let mirror = state.mirrors[location.model]!
                state.mirrors[location.model]!.journal.start(at: mirror.sequence)
                let rows = mirror.value(at: location.path)?.arrayValue?.count ?? 0
                state.views.startArranging(rows: rows, newView: true)
                sources.append((location.model, key, mirror.document, mirror.sequence, rows))
            }
            return sources
        }
        settings.whileArranging?()
        return sources.map { source in
            ArrangedView(
                model: source.model, key: source.key, arranged: SharedView.arrange(source.key, in: source.document),
                sequence: source.sequence, rows: source.rows)
        }
    }

    /// Lets go of the mirrors `views` were arranged from, and of their share of the limits.
    func finishArranging(_ views: [ArrangedView]) {
        guard !views.isEmpty else { return }
        state.withLock { state in
            for view in views {
                state.views.finishArranging(rows: view.rows, newView: true)
                state.metrics.viewRowsArranged += view.rows
                guard state.mirrors[view.model] != nil else { continue }
                state.mirrors[view.model]!.journal.finish(from: view.sequence)
                dropMirrorIfUnused(view.model, in: &state)
            }
        }
    }

    /// Drops `model`'s mirror once no stream follows a location in it and no view is arranged from it.
    func dropMirrorIfUnused(_ model: String, in state: inout State) {
        guard let mirror = state.mirrors[model], mirror.subscribers.isEmpty, !mirror.journal.isActive else { return }
        state.mirrors[model] = nil
    }
}
