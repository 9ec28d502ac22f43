/// New views are arranged outside the hub's lock.
///
/// Arranging an array is O(n log n): seconds for millions of rows, during which no stream could read
/// and no commit could be published if the lock were held. So a stream's new views are arranged before
/// it registers, from its model's mirror as it was then (kept, with no subscriber too, while views are
/// arranged from it); the mirror keeps the commits it takes meanwhile (`ModelMirror.journal`), and the
/// view catches up with them under the lock when the stream attaches, O(log n) each. Should that not be
/// possible (the journal overflowed, the array was replaced), the view is arranged again under the lock.
extension EventHub {
    /// A view arranged from its model's mirror at `sequence`, outside the lock.
    ///
    /// `@unchecked`: its `ArrangedArray` (a class) is made by the thread opening the stream and handed
    /// whole to the hub's state under the lock; no one else ever holds it.
    struct ArrangedView: @unchecked Sendable {
        let model: String
        let key: SharedView.Key
        var arranged: ArrangedArray
        let sequence: UInt64
    }

    /// Arranges the views among `locations` that no stream shows yet. Throws as `register` would when
    /// they would pass `--max-views` or `--max-view-rows`, before any work. Every view returned holds
    /// its mirror: pass them to `finishArranging` once the stream is registered (or refused).
    func arrangeViews(_ locations: [Subscription]) throws(RequestError) -> [ArrangedView] {
        guard locations.contains(where: { $0.view != nil }) else { return [] }
        let sources = try state.withLock { (state) throws(RequestError) -> [(String, SharedView.Key, JSON?, UInt64)] in
            try checkViews(locations, in: state)
            var sources: [(String, SharedView.Key, JSON?, UInt64)] = []
            for location in locations {
                guard let query = location.view else { continue }
                let key = SharedView.Key(path: location.path, query: query)
                guard state.mirrors[location.model]?.views[key] == nil,
                      !sources.contains(where: { $0.0 == location.model && $0.1 == key }) else { continue }
                if state.mirrors[location.model] == nil { state.mirrors[location.model] = makeMirror(location.model, subscribers: []) }
                if state.mirrors[location.model]!.arranging == 0 { state.mirrors[location.model]!.clearJournal() }
                state.mirrors[location.model]!.arranging += 1
                let mirror = state.mirrors[location.model]!
                sources.append((location.model, key, mirror.document, mirror.sequence))
            }
            return sources
        }
        settings.whileArranging?()
        return sources.map { model, key, document, sequence in
            ArrangedView(model: model, key: key, arranged: SharedView.arrange(key, in: document), sequence: sequence)
        }
    }

    /// Lets go of the mirrors `views` were arranged from.
    func finishArranging(_ views: [ArrangedView]) {
        guard !views.isEmpty else { return }
        state.withLock { state in
            for view in views {
                guard state.mirrors[view.model] != nil else { continue }
                state.mirrors[view.model]!.arranging -= 1
                if state.mirrors[view.model]!.arranging == 0 { state.mirrors[view.model]!.clearJournal() }
                dropMirrorIfUnused(view.model, in: &state)
            }
        }
    }

    /// Drops `model`'s mirror once no stream follows a location in it and no view is arranged from it.
    func dropMirrorIfUnused(_ model: String, in state: inout State) {
        guard let mirror = state.mirrors[model], mirror.subscribers.isEmpty, mirror.arranging == 0 else { return }
        state.mirrors[model] = nil
    }
}
