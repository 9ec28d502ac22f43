import LiveBindEngine
/// The suspended subscribers of an event hub, indexed by what wakes them.
///
/// A commit to one model visits only the streams that named that model and the streams that take
/// every model, not every suspended stream: with thousands of streams on other models, a commit
/// that wakes nobody costs next to nothing. Guarded by the hub's lock.
struct SuspendedStreams {
    /// Streams that named their models (`?model=`), under each name they named.
    private var byModel: [String: Set<Int>] = [:]
    /// Streams that take every model (perhaps narrowed by token prefixes).
    private var anyModel: Set<Int> = []
    /// Every suspended stream, with its filter.
    private var filters: [Int: ModelFilter] = [:]

    /// How many streams are suspended.
    var count: Int { filters.count }

    /// The suspended streams.
    var ids: Dictionary<Int, ModelFilter>.Keys { filters.keys }

    /// Whether stream `id` is suspended.
    func contains(_ id: Int) -> Bool { filters[id] != nil }

    /// Adds stream `id`, which receives the models `filter` lets through.
    mutating func insert(_ id: Int, filter: ModelFilter) {
        guard filters.updateValue(filter, forKey: id) == nil else { return }
        if let names = filter.names {
            for name in names { byModel[name, default: []].insert(id) }
        } else {
            anyModel.insert(id)
        }
    }

    /// Removes stream `id` if it is suspended.
    mutating func remove(_ id: Int) {
        guard let filter = filters.removeValue(forKey: id) else { return }
        if let names = filter.names {
            for name in names {
                byModel[name]?.remove(id)
                if byModel[name]?.isEmpty == true { byModel[name] = nil }
            }
        } else {
            anyModel.remove(id)
        }
    }

    /// Removes and returns the streams a frame about `model` wakes; nil (a frame for everyone) wakes all.
    mutating func removeWoken(byModel model: String?) -> [Int] {
        guard let model else {
            let all = Array(filters.keys)
            self = SuspendedStreams()
            return all
        }
        var woken: [Int] = []
        if let named = byModel[model] { woken += named.filter { filters[$0]!.wants(model) } }
        woken += anyModel.filter { filters[$0]!.wants(model) }
        for id in woken { remove(id) }
        return woken
    }
}
