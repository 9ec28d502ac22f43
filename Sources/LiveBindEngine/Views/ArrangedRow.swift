/// One element of an arranged array's content: a node of two treaps at once, the content in array
/// order (by position, counting every element and those the view keeps) and the kept elements in the
/// view's order. Both keep parent links, so an element's place in either is found by walking up.
final class ArrangedRow {
    var value: JSON
    var kept: Bool
    var sortValues: [JSON?]
    let priority: UInt64

    // The content treap.
    var left: ArrangedRow?
    var right: ArrangedRow?
    unowned(unsafe) var parent: ArrangedRow?
    /// Elements in this subtree, and those of them the view keeps.
    var size = 1
    var keptCount: Int

    // The arranged treap (kept elements only).
    var arrangedLeft: ArrangedRow?
    var arrangedRight: ArrangedRow?
    unowned(unsafe) var arrangedParent: ArrangedRow?
    var arrangedSize = 1

    init(value: JSON, kept: Bool, sortValues: [JSON?], priority: UInt64) {
        self.value = value
        self.kept = kept
        self.sortValues = sortValues
        self.priority = priority
        keptCount = kept ? 1 : 0
    }
}

/// The content treap: elements by position.
struct ContentTree {
    private(set) var root: ArrangedRow?

    var count: Int { root?.size ?? 0 }
    var keptCount: Int { root?.keptCount ?? 0 }

    /// Recomputes `node`'s counts from its children, and makes it their parent.
    static func update(_ node: ArrangedRow) {
        var size = 1, kept = node.kept ? 1 : 0
        if let left = node.left {
            size += left.size
            kept += left.keptCount
            left.parent = node
        }
        if let right = node.right {
            size += right.size
            kept += right.keptCount
            right.parent = node
        }
        node.size = size
        node.keptCount = kept
    }

    /// The first `count` elements and the rest.
    private static func split(_ node: ArrangedRow?, _ count: Int) -> (ArrangedRow?, ArrangedRow?) {
        guard let node else { return (nil, nil) }
        let leftSize = node.left?.size ?? 0
        if count <= leftSize {
            let (a, b) = split(node.left, count)
            node.left = b
            update(node)
            a?.parent = nil
            return (a, node)
        }
        let (a, b) = split(node.right, count - leftSize - 1)
        node.right = a
        update(node)
        b?.parent = nil
        return (node, b)
    }

    private static func merge(_ left: ArrangedRow?, _ right: ArrangedRow?) -> ArrangedRow? {
        guard let left else { return right }
        guard let right else { return left }
        if left.priority > right.priority {
            left.right = merge(left.right, right)
            update(left)
            return left
        }
        right.left = merge(left, right.left)
        update(right)
        return right
    }

    mutating func insert(_ row: ArrangedRow, at index: Int) {
        row.left = nil
        row.right = nil
        Self.update(row)
        let (a, b) = Self.split(root, index)
        root = Self.merge(Self.merge(a, row), b)
        root?.parent = nil
    }

    /// Takes out the element at `index` and returns it.
    mutating func remove(at index: Int) -> ArrangedRow {
        let (a, rest) = Self.split(root, index)
        let (row, b) = Self.split(rest, 1)
        root = Self.merge(a, b)
        root?.parent = nil
        return row!
    }

    /// The element at `index`.
    func row(at index: Int) -> ArrangedRow {
        var node = root!
        var index = index
        while true {
            let leftSize = node.left?.size ?? 0
            if index < leftSize {
                node = node.left!
            } else if index == leftSize {
                return node
            } else {
                index -= leftSize + 1
                node = node.right!
            }
        }
    }

    /// `row`'s position among every element, and among the kept ones before it.
    static func position(of row: ArrangedRow) -> (index: Int, keptBefore: Int) {
        var index = row.left?.size ?? 0
        var kept = row.left?.keptCount ?? 0
        var node = row
        while let parent = node.parent {
            if parent.right === node {
                index += (parent.left?.size ?? 0) + 1
                kept += (parent.left?.keptCount ?? 0) + (parent.kept ? 1 : 0)
            }
            node = parent
        }
        return (index, kept)
    }

    /// The kept element with `rank` kept elements before it in array order.
    func keptRow(at rank: Int) -> ArrangedRow {
        var node = root!
        var rank = rank
        while true {
            let leftKept = node.left?.keptCount ?? 0
            if rank < leftKept {
                node = node.left!
            } else if rank == leftKept && node.kept {
                return node
            } else {
                rank -= leftKept + (node.kept ? 1 : 0)
                node = node.right!
            }
        }
    }

    /// Recounts the path from `row` up after its `kept` changed.
    static func recount(from row: ArrangedRow) {
        var node: ArrangedRow? = row
        while let current = node {
            update(current)
            node = current.parent
        }
    }

    /// Every element in order.
    func forEach(_ body: (ArrangedRow) -> Void) {
        var stack: [ArrangedRow] = []
        var node = root
        while node != nil || !stack.isEmpty {
            while let current = node {
                stack.append(current)
                node = current.left
            }
            let current = stack.removeLast()
            body(current)
            node = current.right
        }
    }
}

/// The arranged treap: the kept elements in the view's order, ties in array order.
struct ArrangedTree {
    private(set) var root: ArrangedRow?

    var count: Int { root?.arrangedSize ?? 0 }

    static func update(_ node: ArrangedRow) {
        var size = 1
        if let left = node.arrangedLeft {
            size += left.arrangedSize
            left.arrangedParent = node
        }
        if let right = node.arrangedRight {
            size += right.arrangedSize
            right.arrangedParent = node
        }
        node.arrangedSize = size
    }

    /// The elements ordered before `row` (`before(x, row)` true) and the rest.
    private static func split(_ node: ArrangedRow?, _ before: (ArrangedRow) -> Bool) -> (ArrangedRow?, ArrangedRow?) {
        guard let node else { return (nil, nil) }
        if before(node) {
            let (a, b) = split(node.arrangedRight, before)
            node.arrangedRight = a
            update(node)
            b?.arrangedParent = nil
            return (node, b)
        }
        let (a, b) = split(node.arrangedLeft, before)
        node.arrangedLeft = b
        update(node)
        a?.arrangedParent = nil
        return (a, node)
    }

    private static func splitCount(_ node: ArrangedRow?, _ count: Int) -> (ArrangedRow?, ArrangedRow?) {
        guard let node else { return (nil, nil) }
        let leftSize = node.arrangedLeft?.arrangedSize ?? 0
        if count <= leftSize {
            let (a, b) = splitCount(node.arrangedLeft, count)
            node.arrangedLeft = b
            update(node)
            a?.arrangedParent = nil
            return (a, node)
        }
        let (a, b) = splitCount(node.arrangedRight, count - leftSize - 1)
        node.arrangedRight = a
        update(node)
        b?.arrangedParent = nil
        return (node, b)
    }

    private static func merge(_ left: ArrangedRow?, _ right: ArrangedRow?) -> ArrangedRow? {
        guard let left else { return right }
        guard let right else { return left }
        if left.priority > right.priority {
            left.arrangedRight = merge(left.arrangedRight, right)
            update(left)
            return left
        }
        right.arrangedLeft = merge(left, right.arrangedLeft)
        update(right)
        return right
    }

    /// Inserts `row` after every element `before` says comes before it; returns its index.
    mutating func insert(_ row: ArrangedRow, before: (ArrangedRow) -> Bool) -> Int {
        row.arrangedLeft = nil
        row.arrangedRight = nil
        Self.update(row)
        let (a, b) = Self.split(root, before)
        let index = a?.arrangedSize ?? 0
        root = Self.merge(Self.merge(a, row), b)
        root?.arrangedParent = nil
        return index
    }

    /// Takes out the element at `index`.
    mutating func remove(at index: Int) -> ArrangedRow {
        let (a, rest) = Self.splitCount(root, index)
        let (row, b) = Self.splitCount(rest, 1)
        root = Self.merge(a, b)
        root?.arrangedParent = nil
        return row!
    }

    func row(at index: Int) -> ArrangedRow {
        var node = root!
        var index = index
        while true {
            let leftSize = node.arrangedLeft?.arrangedSize ?? 0
            if index < leftSize {
                node = node.arrangedLeft!
            } else if index == leftSize {
                return node
            } else {
                index -= leftSize + 1
                node = node.arrangedRight!
            }
        }
    }

    static func index(of row: ArrangedRow) -> Int {
        var index = row.arrangedLeft?.arrangedSize ?? 0
        var node = row
        while let parent = node.arrangedParent {
            if parent.arrangedRight === node { index += (parent.arrangedLeft?.arrangedSize ?? 0) + 1 }
            node = parent
        }
        return index
    }
}
