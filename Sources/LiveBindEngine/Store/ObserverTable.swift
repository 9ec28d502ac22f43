import Synchronization

/// A registered handler of changes (`observe`, `observeStamped`) or of commits (`observeAll`). Shared
/// between the observer lists and queued deliveries, so that cancelling also stops deliveries already queued.
///
/// Not generic on purpose: a handler stored in a generic class is called through a reabstraction
/// thunk that copies each event; with concrete closure types each handler borrows its event.
final class ObserverBox: Sendable {
    /// What the observer is called with.
    private enum Handler: Sendable {
        case change(@Sendable (Change) -> Void)
        case stampedChange(@Sendable (Change, ChangeStamp) -> Void)
        case commit(@Sendable (Commit) -> Void)
    }

    let id: UInt64
    let isActive = Atomic<Bool>(true)
    private let handler: Handler

    init(id: UInt64, onChange: @escaping @Sendable (Change) -> Void) {
        self.id = id
        self.handler = .change(onChange)
    }

    init(id: UInt64, onStampedChange: @escaping @Sendable (Change, ChangeStamp) -> Void) {
        self.id = id
        self.handler = .stampedChange(onStampedChange)
    }

    init(id: UInt64, onCommit: @escaping @Sendable (Commit) -> Void) {
        self.id = id
        self.handler = .commit(onCommit)
    }

    func deliver(_ change: Change, _ stamp: ChangeStamp) {
        guard isActive.load(ordering: .acquiring) else { return }
        switch handler {
        case .change(let onChange): onChange(change)
        case .stampedChange(let onStampedChange): onStampedChange(change, stamp)
        case .commit: break
        }
    }

    func deliver(_ commit: Commit) {
        guard isActive.load(ordering: .acquiring), case .commit(let onCommit) = handler else { return }
        onCommit(commit)
    }
}

/// The path observers of one model, as a tree of path components: a change at a path reaches the
/// observers on the way down to it (at and above) and every observer below it.
struct ObserverTable {
    private struct Node {
        /// Child nodes by component. Searched linearly while small (comparing a few strings is cheaper
        /// than hashing one); `lookup` indexes them once there are many.
        var children: [(component: String, node: Int)] = []
        var lookup: [String: Int] = [:]
        var observers: [ObserverBox] = []
        /// Observers in this node and every node below it, to skip empty branches.
        var subtreeCount = 0

        func child(_ component: String) -> Int? {
            if children.count > 8 { return lookup[component] }
            for child in children where child.component == component { return child.node }
            return nil
        }

        mutating func addChild(_ component: String, _ node: Int) {
            children.append((component, node))
            if children.count > 8 {
                if lookup.isEmpty { for child in children { lookup[child.component] = child.node } }
                lookup[component] = node
            }
        }
    }

    private var nodes: [Node] = [Node()]
    /// The last two answers of `soleObserver` and the path components each was for. Writes through a
    /// pre-parsed path pass the same array storage again, which is cheaper to recognise than walking
    /// the tree; two, so that a binding hop within one model (its source, then its target) hits both.
    /// Registering or removing an observer clears them.
    private var lastSole: (components: [String], observer: ObserverBox?)?
    private var previousSole: (components: [String], observer: ObserverBox?)?

    /// Whether no observer is registered.
    var isEmpty: Bool { nodes[0].subtreeCount == 0 }

    mutating func add(_ box: ObserverBox, at path: Path) {
        lastSole = nil
        previousSole = nil
        var node = 0
        nodes[0].subtreeCount += 1
        for component in path.components {
            if let child = nodes[node].child(component) {
                node = child
            } else {
                nodes.append(Node())
                nodes[node].addChild(component, nodes.count - 1)
                node = nodes.count - 1
            }
            nodes[node].subtreeCount += 1
        }
        nodes[node].observers.append(box)
    }

    mutating func remove(id: UInt64, at path: Path) {
        lastSole = nil
        previousSole = nil
        var trail = [0]
        for component in path.components {
            guard let child = nodes[trail.last!].child(component) else { return }
            trail.append(child)
        }
        guard let position = nodes[trail.last!].observers.firstIndex(where: { $0.id == id }) else { return }
        nodes[trail.last!].observers.remove(at: position)
        for node in trail { nodes[node].subtreeCount -= 1 }
    }

    // `enqueue` and `soleObserver` are `mutating` only so that calling them on a model entry's table
    // reads it in place: a non-mutating call would copy the table out of the entry (a retain and a
    // release of its nodes).

    /// Queues `change` (made by the commit `stamp` names) for every observer at, above or below `change.path`.
    mutating func enqueue(_ change: consuming Change, _ stamp: ChangeStamp, into batch: inout DeliveryBatch) {
        let start = batch.callCount
        forEachObserver(at: change.path) { batch.addCall($0, stamp) }
        if batch.callCount > start { batch.addChange(consume change) }
    }

    /// The observer that hears a change at `path`, when exactly one does.
    mutating func soleObserver(at path: Path) -> ObserverBox? {
        if let lastSole, Self.sameStorage(lastSole.components, path.components) { return lastSole.observer }
        if let previousSole, Self.sameStorage(previousSole.components, path.components) {
            swap(&lastSole, &self.previousSole)
            return previousSole.observer
        }
        var sole: ObserverBox?
        var count = 0
        forEachObserver(at: path) { box in
            count += 1
            sole = box
        }
        if count != 1 { sole = nil }
        previousSole = lastSole
        lastSole = (path.components, sole)
        return sole
    }

    /// Whether `a` and `b` share their storage (and so their contents: storage that is shared is
    /// copied before it is written). `lastSole` and `previousSole` keep their arrays alive, so their
    /// addresses are not reused.
    private static func sameStorage(_ a: [String], _ b: [String]) -> Bool {
        a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress && a.count == b.count } }
    }

    /// Calls `body` with every observer at, above or below `path`, outermost first.
    @inline(__always)
    private func forEachObserver(at path: Path, _ body: (ObserverBox) -> Void) {
        // Through a buffer pointer, so that reading a node does not copy (and retain) its arrays.
        nodes.withUnsafeBufferPointer { nodes in
            var node = 0
            for index in nodes[0].observers.indices { body(nodes[0].observers[index]) }
            for component in path.components {
                guard let child = nodes[node].child(component), nodes[child].subtreeCount > 0 else { return }
                node = child
                for index in nodes[node].observers.indices { body(nodes[node].observers[index]) }
            }
            if nodes[node].subtreeCount > nodes[node].observers.count {
                Self.forEachObserver(below: node, in: nodes, body)
            }
        }
    }

    private static func forEachObserver(
        below node: Int, in nodes: UnsafeBufferPointer<Node>, _ body: (ObserverBox) -> Void
    ) {
        for (_, child) in nodes[node].children where nodes[child].subtreeCount > 0 {
            for box in nodes[child].observers { body(box) }
            forEachObserver(below: child, in: nodes, body)
        }
    }
}
