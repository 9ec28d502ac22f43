/// One element of an arranged array's content: a node of two treaps at once, the content in array
/// order (by position, counting every element and those the view keeps) and the kept elements in the
/// view's order. Both keep parent links, so an element's place in either is found by walking up.
final class ArrangedRow {
    var value: JSON
    var kept: Bool
    var sortValues: [JSON?]
    let priority: UInt64

    /// Its links in the content treap (``ContentTree``), and the kept elements in this subtree.
    var content = TreapLinks()
    var keptCount: Int
    /// Its links in the arranged treap (``ArrangedTree``), kept elements only.
    var arranged = TreapLinks()

    init(value: JSON, kept: Bool, sortValues: [JSON?], priority: UInt64) {
        self.value = value
        self.kept = kept
        self.sortValues = sortValues
        self.priority = priority
        keptCount = kept ? 1 : 0
    }
}

/// A row's links in one treap, and the number of rows in its subtree there.
struct TreapLinks {
    var left: ArrangedRow?
    var right: ArrangedRow?
    unowned(unsafe) var parent: ArrangedRow?
    var size = 1
}

/// One of the two treaps a row is a node of: which of its links it walks, and what it counts of a
/// subtree beyond its size.
protocol TreapSide {
    /// `row`'s links in this treap, changed in place.
    static subscript(_ row: ArrangedRow) -> TreapLinks { get set }
    /// Recomputes the counts `node` keeps beyond its size from its children's.
    static func recount(_ node: ArrangedRow)
}

/// The content treap's side: elements by position, each subtree counting the elements the view keeps.
enum ContentSide: TreapSide {
    static subscript(_ row: ArrangedRow) -> TreapLinks {
        get { row.content }
        _modify { yield &row.content }
    }

    static func recount(_ node: ArrangedRow) {
        node.keptCount = (node.kept ? 1 : 0) + (node.content.left?.keptCount ?? 0) + (node.content.right?.keptCount ?? 0)
    }
}

/// The arranged treap's side: the kept elements in the view's order, ties in array order.
enum ArrangedSide: TreapSide {
    static subscript(_ row: ArrangedRow) -> TreapLinks {
        get { row.arranged }
        _modify { yield &row.arranged }
    }

    static func recount(_ node: ArrangedRow) {}
}

/// The content treap: every element by position.
typealias ContentTree = Treap<ContentSide>
/// The arranged treap: the kept elements in the view's order.
typealias ArrangedTree = Treap<ArrangedSide>

/// A treap of rows on one side's links: split and merge by count (or by an order), parent links kept
/// so a row's index is found by walking up.
struct Treap<Side: TreapSide> {
    private(set) var root: ArrangedRow?

    var count: Int { root.map { Side[$0].size } ?? 0 }

    private static func size(_ node: ArrangedRow?) -> Int { node.map { Side[$0].size } ?? 0 }

    /// Recomputes `node`'s counts from its children, and makes it their parent.
    static func update(_ node: ArrangedRow) {
        var size = 1
        if let left = Side[node].left {
            size += Side[left].size
            Side[left].parent = node
        }
        if let right = Side[node].right {
            size += Side[right].size
            Side[right].parent = node
        }
        Side[node].size = size
        Side.recount(node)
    }

    /// The first `count` elements and the rest.
    private static func split(_ node: ArrangedRow?, _ count: Int) -> (ArrangedRow?, ArrangedRow?) {
        guard let node else { return (nil, nil) }
        let leftSize = size(Side[node].left)
        if count <= leftSize {
            let (a, b) = split(Side[node].left, count)
            Side[node].left = b
            update(node)
            if let a { Side[a].parent = nil }
            return (a, node)
        }
        let (a, b) = split(Side[node].right, count - leftSize - 1)
        Side[node].right = a
        update(node)
        if let b { Side[b].parent = nil }
        return (node, b)
    }

    /// The elements ordered before a row (`before(x)` true) and the rest.
    private static func split(_ node: ArrangedRow?, _ before: (ArrangedRow) -> Bool) -> (ArrangedRow?, ArrangedRow?) {
        guard let node else { return (nil, nil) }
        if before(node) {
            let (a, b) = split(Side[node].right, before)
            Side[node].right = a
            update(node)
            if let b { Side[b].parent = nil }
            return (node, b)
        }
        let (a, b) = split(Side[node].left, before)
        Side[node].left = b
        update(node)
        if let a { Side[a].parent = nil }
        return (a, node)
    }

    private static func merge(_ left: ArrangedRow?, _ right: ArrangedRow?) -> ArrangedRow? {
        guard let left else { return right }
        guard let right else { return left }
        if left.priority > right.priority {
            Side[left].right = merge(Side[left].right, right)
            update(left)
            return left
        }
        Side[right].left = merge(left, Side[right].left)
        update(right)
        return right
    }

    /// Puts `row` between `a` and `b` as the new root.
    private mutating func join(_ a: ArrangedRow?, _ row: ArrangedRow, _ b: ArrangedRow?) {
        root = Self.merge(Self.merge(a, row), b)
        if let root { Side[root].parent = nil }
    }

    private static func detach(_ row: ArrangedRow) {
        Side[row].left = nil
        Side[row].right = nil
        update(row)
    }

    mutating func insert(_ row: ArrangedRow, at index: Int) {
        Self.detach(row)
        let (a, b) = Self.split(root, index)
        join(a, row, b)
    }

    /// Inserts `row` after every element `before` says comes before it; returns its index.
    mutating func insert(_ row: ArrangedRow, before: (ArrangedRow) -> Bool) -> Int {
        Self.detach(row)
        let (a, b) = Self.split(root, before)
        let index = Self.size(a)
        join(a, row, b)
        return index
    }

    /// Takes out the element at `index` and returns it.
    mutating func remove(at index: Int) -> ArrangedRow {
        let (a, rest) = Self.split(root, index)
        let (row, b) = Self.split(rest, 1)
        root = Self.merge(a, b)
        if let root { Side[root].parent = nil }
        return row!
    }

    /// The element at `index`.
    func row(at index: Int) -> ArrangedRow {
        var node = root!
        var index = index
        while true {
            let leftSize = Self.size(Side[node].left)
            if index < leftSize {
                node = Side[node].left!
            } else if index == leftSize {
                return node
            } else {
                index -= leftSize + 1
                node = Side[node].right!
            }
        }
    }

    /// `row`'s index.
    static func index(of row: ArrangedRow) -> Int {
        var index = size(Side[row].left)
        var node = row
        while let parent = Side[node].parent {
            if Side[parent].right === node { index += size(Side[parent].left) + 1 }
            node = parent
        }
        return index
    }

    /// Recounts the path from `row` up (after what its side counts of it changed).
    static func recount(from row: ArrangedRow) {
        var node: ArrangedRow? = row
        while let current = node {
            update(current)
            node = Side[current].parent
        }
    }
}

extension Treap where Side == ContentSide {
    var keptCount: Int { root?.keptCount ?? 0 }

    /// `row`'s position among every element, and among the kept ones before it.
    static func position(of row: ArrangedRow) -> (index: Int, keptBefore: Int) {
        var index = row.content.left?.content.size ?? 0
        var kept = row.content.left?.keptCount ?? 0
        var node = row
        while let parent = node.content.parent {
            if parent.content.right === node {
                index += (parent.content.left?.content.size ?? 0) + 1
                kept += (parent.content.left?.keptCount ?? 0) + (parent.kept ? 1 : 0)
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
            let leftKept = node.content.left?.keptCount ?? 0
            if rank < leftKept {
                node = node.content.left!
            } else if rank == leftKept && node.kept {
                return node
            } else {
                rank -= leftKept + (node.kept ? 1 : 0)
                node = node.content.right!
            }
        }
    }
}
