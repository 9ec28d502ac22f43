/// The bindings between key paths of one registry as a graph, kept up to date as bindings come and go,
/// so that the bind-time cycle check (`BindingGraph+Cycles.swift`) searches only the part of the graph
/// a new binding can reach instead of rebuilding it from every binding.
///
/// Values flow along arcs: every binding has a forward arc (source → target) and a two-way binding also
/// a backward arc. Arc a feeds arc b when a's end overlaps b's start (same model, one path a prefix of
/// the other). Endpoints are nodes of a trie per model, one node per path component; each node lists
/// the arcs that start and end at it and counts those at or below it. So the arcs a write at a path
/// feeds are found by walking up to the model's root and down only the subtrees that hold any, and
/// adding or removing a binding costs time proportional to its paths' lengths.
///
/// A value type: the registry keeps it behind its lock.
struct BindingGraph: Sendable {
    /// What the cycle check needs of one binding between two key paths.
    struct Edge: Sendable {
        var source: BindingEndpoint
        var target: BindingEndpoint
        var twoWay: Bool
        var transform: Transform?
        var each: Bool
    }

    /// The side of an arc a node list holds.
    enum End {
        /// Arcs that start at the node (they read it).
        case start
        /// Arcs that end at the node (they write it).
        case end
    }

    private struct Slot {
        var edge: Edge
        var source: Int
        var target: Int
    }

    private struct Node {
        /// The parent node; -1 for a model's root.
        var parent: Int
        /// The path component (the model's name for a root).
        var key: String
        var children: [String: Int] = [:]
        var starts: [Int] = []
        var ends: [Int] = []
        /// Arcs that start at this node or below it.
        var startsBelow = 0
        /// Arcs that end at this node or below it.
        var endsBelow = 0

        func arcs(_ end: End) -> [Int] { end == .start ? starts : ends }
        func below(_ end: End) -> Int { end == .start ? startsBelow : endsBelow }
    }

    /// One slot per binding; arc `2 * slot` is its forward arc, `2 * slot + 1` its backward arc.
    private var slots: [Slot?] = []
    private var freeSlots: [Int] = []
    private var slotByID: [String: Int] = [:]
    private var nodes: [Node] = []
    private var freeNodes: [Int] = []
    private var roots: [String: Int] = [:]

    /// How many arcs the graph holds (one per one-way binding, two per two-way binding).
    private(set) var arcCount = 0
    /// How many search states the cycle checks have visited, in all: the measure of their work.
    var searchedStates = 0

    /// How many trie nodes are in use (freed ones are reused).
    var nodeCount: Int { nodes.count - freeNodes.count }

    /// The arcs `edge` adds: 1 for a one-way binding, 2 for a two-way one.
    static func arcs(of edge: Edge) -> Int { edge.twoWay ? 2 : 1 }

    // MARK: Adding and removing

    /// Adds a binding's arcs, unchecked (see `insertChecked`), and returns its slot.
    @discardableResult
    mutating func insert(_ edge: Edge) -> Int {
        let source = node(for: edge.source), target = node(for: edge.target)
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = Slot(edge: edge, source: source, target: target)
        } else {
            slot = slots.count
            slots.append(Slot(edge: edge, source: source, target: target))
        }
        for arc in arcs(ofSlot: slot) {
            nodes[from(arc)].starts.append(arc)
            nodes[to(arc)].ends.append(arc)
            count(from(arc), .start, by: 1)
            count(to(arc), .end, by: 1)
        }
        arcCount += Self.arcs(of: edge)
        return slot
    }

    /// Names the binding in `slot`, so that `remove(id:)` finds it.
    mutating func name(_ slot: Int, id: String) {
        slotByID[id] = slot
    }

    /// Removes the binding with this id, if the graph holds it.
    mutating func remove(id: String) {
        guard let slot = slotByID.removeValue(forKey: id) else { return }
        remove(slot: slot)
    }

    /// Removes the arcs of `slot` (unnamed: see `remove(id:)`) and the trie nodes nothing needs any more.
    mutating func remove(slot: Int) {
        guard let removed = slots[slot] else { return }
        for arc in arcs(ofSlot: slot) {
            nodes[from(arc)].starts.removeAll { $0 == arc }
            nodes[to(arc)].ends.removeAll { $0 == arc }
            count(from(arc), .start, by: -1)
            count(to(arc), .end, by: -1)
        }
        arcCount -= Self.arcs(of: removed.edge)
        slots[slot] = nil
        freeSlots.append(slot)
        prune(removed.source)
        prune(removed.target)
    }

    // MARK: Arcs

    /// The arcs of a slot: its forward arc and, for a two-way binding, its backward arc.
    func arcs(ofSlot slot: Int) -> ClosedRange<Int> {
        slots[slot]!.edge.twoWay ? 2 * slot...2 * slot + 1 : 2 * slot...2 * slot
    }

    /// The binding an arc belongs to.
    func edge(of arc: Int) -> Edge { slots[arc / 2]!.edge }

    /// Whether the arc runs from the binding's target back to its source.
    static func isBackward(_ arc: Int) -> Bool { arc % 2 == 1 }

    /// The node the arc reads.
    func from(_ arc: Int) -> Int { Self.isBackward(arc) ? slots[arc / 2]!.target : slots[arc / 2]!.source }

    /// The node the arc writes.
    func to(_ arc: Int) -> Int { Self.isBackward(arc) ? slots[arc / 2]!.source : slots[arc / 2]!.target }

    /// The endpoint the arc reads.
    func fromEndpoint(_ arc: Int) -> BindingEndpoint { Self.isBackward(arc) ? edge(of: arc).target : edge(of: arc).source }

    /// The endpoint the arc writes.
    func toEndpoint(_ arc: Int) -> BindingEndpoint { Self.isBackward(arc) ? edge(of: arc).source : edge(of: arc).target }

    /// Calls `body` with every arc whose `end` overlaps `node`: at it, above it, or below it.
    func forEachArc<E: Error>(_ end: End, overlapping node: Int, _ body: (Int) throws(E) -> Void) throws(E) {
        var above = node
        while above >= 0 {
            for arc in nodes[above].arcs(end) { try body(arc) }
            above = nodes[above].parent
        }
        var pending = nodes[node].children.values.filter { nodes[$0].below(end) > 0 }
        while let below = pending.popLast() {
            for arc in nodes[below].arcs(end) { try body(arc) }
            for child in nodes[below].children.values where nodes[child].below(end) > 0 { pending.append(child) }
        }
    }

    /// How many arcs have their `end` overlapping `node`, in time proportional to the path's length.
    func arcCount(_ end: End, overlapping node: Int) -> Int {
        var total = nodes[node].below(end) - nodes[node].arcs(end).count
        var above = node
        while above >= 0 {
            total += nodes[above].arcs(end).count
            above = nodes[above].parent
        }
        return total
    }

    // MARK: The trie

    /// The node of an endpoint, created (with the nodes above it) when missing.
    private mutating func node(for endpoint: BindingEndpoint) -> Int {
        var current: Int
        if let root = roots[endpoint.model] {
            current = root
        } else {
            current = makeNode(parent: -1, key: endpoint.model)
            roots[endpoint.model] = current
        }
        for component in endpoint.path.components {
            if let child = nodes[current].children[component] {
                current = child
            } else {
                let child = makeNode(parent: current, key: component)
                nodes[current].children[component] = child
                current = child
            }
        }
        return current
    }

    private mutating func makeNode(parent: Int, key: String) -> Int {
        let node = Node(parent: parent, key: key)
        if let free = freeNodes.popLast() {
            nodes[free] = node
            return free
        }
        nodes.append(node)
        return nodes.count - 1
    }

    /// Adds `delta` to the `end` counts of `node` and every node above it.
    private mutating func count(_ node: Int, _ end: End, by delta: Int) {
        var current = node
        while current >= 0 {
            switch end {
            case .start: nodes[current].startsBelow += delta
            case .end: nodes[current].endsBelow += delta
            }
            current = nodes[current].parent
        }
    }

    /// Frees `node` and the nodes above it while they hold no arcs and have no children.
    private mutating func prune(_ node: Int) {
        var current = node
        while current >= 0, nodes[current].startsBelow == 0, nodes[current].endsBelow == 0, nodes[current].children.isEmpty {
            let parent = nodes[current].parent
            if parent >= 0 {
                nodes[parent].children[nodes[current].key] = nil
            } else {
                roots[nodes[current].key] = nil
            }
            nodes[current] = Node(parent: -1, key: "")
            freeNodes.append(current)
            current = parent
        }
    }
}
