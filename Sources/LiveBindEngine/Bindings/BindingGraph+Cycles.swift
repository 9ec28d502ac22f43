import DequeModule

/// The bind-time cycle check: refuses a binding that would close a loop of bindings that cannot settle.
///
/// A loop settles only when every binding in it is two-way, each one reads exactly the path the one
/// before it writes, and the transforms around it compose to the identity (checked by sending probe
/// values once around it: the current value, each transform's samples, a few typical values). Going
/// straight back over the same binding is not a loop: a two-way binding's own echo is suppressed by
/// commit order. Any other loop is refused, whatever its length, so propagation never needs a
/// run-time limit for the bindings of one registry.
///
/// The search runs over states (arc, whether a one-way arc or an inexact junction was passed since the
/// new binding), breadth-first from each arc of the new binding, each state at most once: time linear
/// in the part of the graph the new binding can reach. It is skipped outright when nothing reads what the
/// new binding writes or nothing writes what it reads, which is every step of building a chain in either
/// order. The graph held no refused loop before the new binding, so every loop found passes through it.
extension BindingGraph {
    /// At most this many loops that can settle are checked with probe values for one new binding. If
    /// the loops already in the graph compose to the identity, one loop through the new binding that
    /// does implies all of them do; the further ones are checked only against rounding surprises.
    private static let maxVerifiedLoops = 64

    /// Adds `edge` and returns its slot, or throws `unsettledCycle` (and changes nothing) when it would
    /// close a loop that cannot settle.
    mutating func insertChecked(_ edge: Edge, store: Store) throws(BindingError) -> Int {
        if edge.source.overlaps(edge.target) {
            throw .unsettledCycle(
                "source \(edge.source) and target \(edge.target) overlap: every write to the target would change the source")
        }
        let slot = insert(edge)
        var searched = 0
        defer { searchedStates += searched }
        do {
            for start in arcs(ofSlot: slot) where mayCloseLoop(start) {
                try searchLoops(from: start, store: store, searched: &searched)
            }
        } catch {
            remove(slot: slot)
            throw error
        }
        return slot
    }

    /// Whether anything other than the arc's own binding reads what `start` writes and writes what it reads.
    private func mayCloseLoop(_ start: Int) -> Bool {
        // The binding's own backward arc reads its target and writes its source: leave it out.
        let own = edge(of: start).twoWay ? 1 : 0
        return arcCount(.start, overlapping: to(start)) > own && arcCount(.end, overlapping: from(start)) > own
    }

    /// Breadth-first from `start` over (arc, passed a one-way arc or an inexact junction) states.
    private func searchLoops(from start: Int, store: Store, searched: inout Int) throws(BindingError) {
        func state(_ arc: Int, _ unsettling: Bool) -> Int { 2 * arc + (unsettling ? 1 : 0) }
        let first = state(start, !edge(of: start).twoWay)
        var cameFrom: [Int: Int] = [first: -1]
        var queue = [first]
        var head = 0
        var verified = 0
        while head < queue.count {
            let current = queue[head]
            head += 1
            searched += 1
            let arc = current / 2, unsettling = current % 2 == 1, end = to(arc)
            try forEachArc(.start, overlapping: end) { (next: Int) throws(BindingError) in
                guard next / 2 != arc / 2 else { return }  // straight back over the same binding: its echo
                let nextUnsettling = unsettling || !edge(of: next).twoWay || from(next) != end
                if next == start {
                    let loop = route(to: current, cameFrom)
                    if nextUnsettling { throw refusal(loop) }
                    if verified < Self.maxVerifiedLoops {
                        verified += 1
                        try verify(loop, store: store)
                    }
                } else if cameFrom[state(next, nextUnsettling)] == nil {
                    cameFrom[state(next, nextUnsettling)] = current
                    queue.append(state(next, nextUnsettling))
                }
            }
        }
    }

    /// The arcs from the search's start to `state`'s arc, in order.
    private func route(to state: Int, _ cameFrom: [Int: Int]) -> [Int] {
        var arcs: [Int] = []
        var current = state
        while current >= 0 {
            arcs.append(current / 2)
            current = cameFrom[current]!
        }
        return arcs.reversed()
    }

    /// `binding S → T would close the cycle a → b → … → a`, from the new binding's point of view; a long
    /// loop is named by its first and last ten paths.
    private func introduction(_ loop: [Int]) -> String {
        let new = edge(of: loop[0])
        var paths = loop.map { fromEndpoint($0).description } + [fromEndpoint(loop[0]).description]
        if paths.count > 24 {
            paths = paths.prefix(10) + ["… \(paths.count - 20) more …"] + paths.suffix(10)
        }
        return "binding \(new.source) \(new.twoWay ? "↔" : "→") \(new.target) would close the cycle \(paths.joined(separator: " → "))"
    }

    /// The error for a loop through a one-way binding or through two paths that overlap without being equal.
    private func refusal(_ loop: [Int]) -> BindingError {
        let intro = introduction(loop)
        if loop.contains(where: { !edge(of: $0).twoWay }) {
            return .unsettledCycle(
                "\(intro), which contains one-way bindings: values would go round it forever. Make every binding in it twoWay or break the cycle"
            )
        }
        for (arc, next) in zip(loop, loop.dropFirst() + [loop[0]]) where to(arc) != from(next) {
            return .unsettledCycle(
                "\(intro) through the overlapping paths \(toEndpoint(arc)) and \(fromEndpoint(next)), which cannot be checked to settle")
        }
        return .unsettledCycle("\(intro), which cannot settle")
    }

    /// Sends probe values once around a loop of two-way bindings with exact junctions; throws when one
    /// does not come back as itself.
    private func verify(_ loop: [Int], store: Store) throws(BindingError) {
        let start = fromEndpoint(loop[0])
        var probes: [JSON] = []
        if let current = try? store.value(of: start.model, at: start.path) { probes.append(current) }
        for arc in loop where !Self.isBackward(arc) { probes += edge(of: arc).transform?.samples ?? [] }
        probes += [0, 1, 2.5, -3, 100, true, false, "a", "on"]
        probes += probes.map { JSON.array([$0]) }
        for probe in probes {
            var value = probe
            do {
                for arc in loop { value = try apply(arc, value) }
            } catch {
                continue  // the probe does not fit these transforms; try the next one
            }
            if !Self.approximatelyEqual(value, probe) {
                throw .unsettledCycle(
                    "\(introduction(loop)), whose transforms turn \(probe) into \(value) instead of giving it back: it could never settle")
            }
        }
    }

    /// What the arc's binding makes of `value` in the arc's direction (per element when it has `each`).
    private func apply(_ arc: Int, _ value: JSON) throws(BindingError) -> JSON {
        let edge = edge(of: arc), backward = Self.isBackward(arc)
        func step(_ value: JSON) throws(BindingError) -> JSON {
            guard let transform = edge.transform else { return value }
            return backward ? try transform.applyReverse(value) : try transform.applyForward(value)
        }
        guard edge.each else { return try step(value) }
        guard case .array(let elements) = value else { throw .transformFailed(transform: "each", reason: "not an array") }
        return .array(Deque(try elements.map { element throws(BindingError) in try step(element) }))
    }

    /// Equality that forgives the last bits of floating-point rounding.
    static func approximatelyEqual(_ a: JSON, _ b: JSON) -> Bool {
        switch (a, b) {
        case (.array(let x), .array(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { approximatelyEqual($0, $1) }
        default:
            if let x = a.doubleValue, let y = b.doubleValue {
                return x == y || abs(x - y) <= 1e-9 * max(1, abs(x), abs(y))
            }
            return a == b
        }
    }
}
