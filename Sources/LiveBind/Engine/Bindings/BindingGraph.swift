import Collections

/// The bind-time cycle check: refuses a binding that would close a loop of bindings that cannot settle.
///
/// Values flow along arcs: every binding has a forward arc (source → target) and a two-way binding also
/// a backward arc. Arc a feeds arc b when a's end overlaps b's start (same model, one path a prefix of
/// the other). Going straight back over the same binding is not a cycle (a two-way binding's own echo
/// is suppressed by sequence numbers). A real cycle settles only when every binding in it is two-way and
/// the transforms around it compose to the identity; this is checked by sending probe values (the
/// current value, each transform's samples, a few typical values) once around the cycle.
enum BindingGraph {
    private struct Arc {
        var binding: Int
        var from: BindingEndpoint
        var to: BindingEndpoint
        var oneWay: Bool
        var apply: (JSON) throws(BindingError) -> JSON
        var samples: [JSON]
    }

    private static let maxCycleLength = 12
    private static let maxCycles = 64

    /// Throws `unsettledCycle` when `candidate` would close a cycle that cannot settle.
    static func check(_ candidate: PreparedBinding, against existing: [Binding], store: Store) throws(BindingError) {
        guard candidate.sink == nil, let target = candidate.target.endpoint else { return }
        let spec = candidate.spec
        if spec.source.overlaps(target) {
            throw .unsettledCycle("source \(spec.source) and target \(target) overlap: every write to the target would change the source")
        }
        var arcs: [Arc] = []
        for (index, binding) in existing.enumerated() {
            guard let to = binding.target.endpoint else { continue }
            arcs += makeArcs(index, binding.source, to, binding.mode, binding.transform, binding.each)
        }
        let newArcs = makeArcs(existing.count, spec.source, target, spec.mode, candidate.transform, spec.each)
        arcs += newArcs
        for start in arcs.indices where arcs[start].binding == existing.count {
            var cycles: [[Int]] = []
            var path = [start]
            findCycles(from: start, arcs: arcs, path: &path, cycles: &cycles)
            for cycle in cycles { try verify(cycle.map { arcs[$0] }, spec: spec, store: store) }
        }
    }

    private static func makeArcs(
        _ index: Int, _ source: BindingEndpoint, _ target: BindingEndpoint, _ mode: BindingMode,
        _ transform: Transform?, _ each: Bool
    ) -> [Arc] {
        func lifted(_ step: @escaping (JSON) throws(BindingError) -> JSON) -> (JSON) throws(BindingError) -> JSON {
            guard each else { return step }
            return { value throws(BindingError) in
                guard case .array(let elements) = value else { throw .transformFailed(transform: "each", reason: "not an array") }
                return .array(Deque(try elements.map { element throws(BindingError) in try step(element) }))
            }
        }
        let samples = transform?.samples ?? []
        var arcs = [Arc(
            binding: index, from: source, to: target, oneWay: mode == .oneWay,
            apply: lifted { value throws(BindingError) in try transform?.applyForward(value) ?? value }, samples: samples)]
        if mode == .twoWay {
            arcs.append(Arc(
                binding: index, from: target, to: source, oneWay: false,
                apply: lifted { value throws(BindingError) in try transform?.applyReverse(value) ?? value }, samples: []))
        }
        return arcs
    }

    /// Depth-first: every elementary cycle through `path[0]`, bounded in length and number.
    private static func findCycles(from start: Int, arcs: [Arc], path: inout [Int], cycles: inout [[Int]]) {
        guard cycles.count < maxCycles, path.count <= maxCycleLength, let last = path.last else { return }
        for next in arcs.indices where arcs[last].to.overlaps(arcs[next].from) && arcs[next].binding != arcs[last].binding {
            if next == start {
                cycles.append(path)
            } else if !path.contains(next) {
                path.append(next)
                findCycles(from: start, arcs: arcs, path: &path, cycles: &cycles)
                path.removeLast()
            }
        }
    }

    private static func verify(_ cycle: [Arc], spec: BindingSpec, store: Store) throws(BindingError) {
        let route = (cycle.map(\.from.description) + [cycle[0].from.description]).joined(separator: " → ")
        let arrow = spec.mode == .twoWay ? "↔" : "→"
        let intro = "binding \(spec.source) \(arrow) \(spec.target) would close the cycle \(route)"
        if cycle.contains(where: \.oneWay) {
            throw .unsettledCycle("\(intro), which contains one-way bindings: values would go round it forever. Make every binding in it twoWay or break the cycle")
        }
        for (arc, next) in zip(cycle, cycle.dropFirst() + [cycle[0]]) where arc.to != next.from {
            throw .unsettledCycle("\(intro) through the overlapping paths \(arc.to) and \(next.from), which cannot be checked to settle")
        }
        var probes: [JSON] = []
        if let current = try? store.value(of: cycle[0].from.model, at: cycle[0].from.path) { probes.append(current) }
        for arc in cycle { probes += arc.samples }
        probes += [0, 1, 2.5, -3, 100, true, false, "a", "on"]
        probes += probes.map { JSON.array([$0]) }
        for probe in probes {
            var value = probe
            do {
                for arc in cycle { value = try arc.apply(value) }
            } catch {
                continue  // the probe does not fit these transforms; try the next one
            }
            if !approximatelyEqual(value, probe) {
                throw .unsettledCycle("\(intro), whose transforms turn \(probe) into \(value) instead of giving it back: it could never settle")
            }
        }
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
