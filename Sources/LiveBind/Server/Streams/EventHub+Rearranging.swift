import LiveBindEngine
internal import LiveBindHTTP
/// Views whose array was replaced by a long one are arranged again outside the hub's lock.
///
/// Arranging an array is O(n log n) (about a second for 300,000 rows), and a 90-byte JSON Patch `copy`
/// can replace a viewed array with one that long: under the lock, every stream on the server would wait
/// for it. So an array longer than `SharedView.arrangedUnderLock` leaves its view stale (`isStale`), and
/// the commit hands it, with the mirror's document (copy-on-write) and sequence, to the `arranging`
/// queue. Its streams are held back meanwhile (`pendingSnapshots`: they send nothing more until then,
/// so nothing overtakes what the view shows); the mirror keeps the commits that come meanwhile
/// (`ModelMirror.journal`). Once arranged, the view catches up with them under the lock, O(log n) each,
/// and each of its streams gets a snapshot of the view at the mirror's last commit, in place of the
/// events it missed. Should the catch-up fail (the journal overflowed, the array was replaced again),
/// the view is handed out again from the mirror as it is then. The tree a reset lets go of is freed
/// on the queue too. A short array is arranged in the commit, under the lock, as before: its streams
/// get a `set` of the shown rows.
extension EventHub {
    /// A stale view to arrange from `document` (its mirror at `sequence`), and the tree it let go of.
    ///
    /// `@unchecked`: the view is only touched under the hub's lock, and its `discarded` tree, taken
    /// from it under the lock, is held by no one else.
    struct Rearrangement: @unchecked Sendable {
        let model: String
        let view: SharedView
        let document: JSON?
        let sequence: UInt64
        let rows: Int
        let discarded: ArrangedArray?
    }

    /// A new view of `key` for `mirror` (of `model`): the one arranged outside the lock (`arranged`), when it catches
    /// up with the mirror; else one arranged now when its array is short, or a stale one that
    /// `startRearranging` hands out. Called with the lock held.
    func makeView(
        _ key: SharedView.Key, of model: String, from arranged: [ArrangedView], in mirror: ModelMirror,
        metrics: inout EventHubMetrics
    ) -> SharedView {
        if let made = arranged.first(where: { $0.model == model && $0.key == key }),
            let applied = SharedView.catchUp(made.arranged, key, from: made.sequence, to: mirror)
        {
            metrics.countArranged(underLock: applied)
            return SharedView(key, arranged: made.arranged)
        }
        let view = SharedView(key, in: mirror)
        if !view.isStale { metrics.countArranged(underLock: SharedView.count(at: key.path, in: mirror)) }
        return view
    }

    /// Hands every stale view of `mirror` (of `model`) that is not being arranged yet to the arranging
    /// queue, from the mirror as it is now, and holds back the streams that show it. Called with the
    /// lock held, `mirror` out of `state.mirrors`.
    func startRearranging(_ mirror: inout ModelMirror, of model: String, in state: inout State) {
        for view in mirror.views.values where view.isStale && view.rearranging == nil {
            let rows = SharedView.count(at: view.key.path, in: mirror)
            view.rearranging = mirror.sequence
            mirror.journal.start(at: mirror.sequence)
            state.views.startArranging(rows: rows, newView: false)
            for id in mirror.subscribers {
                guard let subscriber = state.subscribers[id] else { continue }
                for index in subscriber.subscriptions.indices where subscriber.subscriptions[index].shows(view, in: model) {
                    subscriber.holdForArrangement(index)
                }
            }
            let job = Rearrangement(
                model: model, view: view, document: mirror.document, sequence: mirror.sequence,
                rows: rows, discarded: view.takeDiscarded())
            arranging.async { [weak self] in self?.rearrange(job) }
        }
    }

    /// Arranges `job`'s array, on the arranging queue, then puts it in place under the lock.
    private func rearrange(_ job: Rearrangement) {
        settings.whileRearranging?()
        let made = SharedView.arrange(job.view.key, in: job.document)
        let (wake, pending) = finishRearranging(job, made)
        for connection in wake { connection.resume() }
        // Snapshots past the budget end their streams (`finishSnapshots`): nobody waits on an error here.
        try? finishSnapshots(pending)
    }

    /// Catches `made` up with the mirror and installs it in `job.view`, unless the view is gone or was
    /// handed out again meanwhile; then counts every view's rows against `--max-view-rows` as a commit
    /// does (`keepViewRows`: past it the largest views go and their streams end), and takes the
    /// snapshots the remaining streams wait for. Returns the streams to wake and the snapshots to encode.
    private func finishRearranging(_ job: Rearrangement, _ made: ArrangedArray)
        -> (wake: [any HTTPStreamConnection], pending: [PendingSnapshot])
    {
        state.withLock { state in
            state.views.finishArranging(rows: job.rows, newView: false)
            state.metrics.viewRowsArranged += job.rows
            guard var mirror = state.mirrors.removeValue(forKey: job.model) else { return ([], []) }
            var installed = false
            if mirror.views[job.view.key] === job.view, job.view.rearranging == job.sequence {
                job.view.rearranging = nil
                if let applied = SharedView.catchUp(made, job.view.key, from: job.sequence, to: mirror) {
                    state.metrics.countArranged(underLock: applied)
                    job.view.install(made)
                    installed = true
                } else {
                    startRearranging(&mirror, of: job.model, in: &state)
                }
            }
            mirror.journal.finish(from: job.sequence)
            var wake: [any HTTPStreamConnection] = []
            if installed { keepViewRows(of: job.model, &mirror, in: &state, waking: &wake) }
            let subscribers = mirror.subscribers
            state.mirrors[job.model] = mirror
            dropMirrorIfUnused(job.model, in: &state)
            guard installed else { return ([], []) }
            var pending: [PendingSnapshot] = []
            for id in subscribers {
                guard let subscriber = state.subscribers[id], !subscriber.isCut else { continue }
                for index in subscriber.subscriptions.indices
                where subscriber.subscriptions[index].awaitsArrangement && subscriber.subscriptions[index].shows(job.view, in: job.model) {
                    subscriber.subscriptions[index].awaitsArrangement = false
                    subscriber.pendingSnapshots -= 1
                    if let snapshot = takeSnapshot(ofLocation: index, of: subscriber, id: id, in: &state) { pending.append(snapshot) }
                }
                // Held back, not at the log's end: woken where it stands.
                if subscriber.pendingSnapshots == 0, state.suspended.contains(id) {
                    state.suspended.remove(id)
                    if let connection = subscriber.connection { wake.append(connection) }
                }
            }
            return (wake, pending)
        }
    }
}

extension Subscription {
    /// Whether the location is `view`, of `model`.
    func shows(_ view: SharedView, in model: String) -> Bool {
        self.model == model && path == view.key.path && self.view == view.key.query
    }
}
