/// A stack in one buffer whose top elements can be moved out in one piece, for the parser's open
/// containers: closing one moves its members into their final storage without copying, retaining or
/// destroying them, and the stack shrinks by a count.
///
/// The buffer is allocated at the first push: a parse that never opens a container (a write's body
/// is often one number) allocates only the stack its value goes on.
struct ParseStack<Element>: ~Copyable {
    private var base: UnsafeMutablePointer<Element>
    private var capacity = 0
    /// The capacity the first push allocates.
    private let initialCapacity: Int
    /// The number of elements on the stack.
    private(set) var count = 0

    init(capacity: Int = 64) {
        initialCapacity = max(capacity, 1)
        base = UnsafeMutablePointer(bitPattern: MemoryLayout<Element>.alignment)!  // nothing allocated yet
    }

    deinit {
        guard capacity > 0 else { return }
        base.deinitialize(count: count)
        base.deallocate()
    }

    @inline(__always)
    mutating func pop() -> Element {
        count -= 1
        return (base + count).move()
    }

    @inline(__always)
    mutating func push(_ element: consuming Element) {
        if count == capacity { grow() }
        (base + count).initialize(to: element)
        count += 1
    }

    /// The top element, to change in place. The stack is not empty.
    @inline(__always)
    var top: UnsafeMutablePointer<Element> { base + (count - 1) }

    /// The element at `index` (counted from the bottom).
    @inline(__always)
    subscript(index: Int) -> Element {
        base[index]
    }

    /// Moves the elements from `start` to the top into `target`, which has room for them, and leaves
    /// the stack `start` high.
    @inline(__always)
    mutating func moveTop(from start: Int, to target: UnsafeMutablePointer<Element>) {
        target.moveInitialize(from: base + start, count: count - start)
        count = start
    }

    /// The elements from `start` to the top, moved off the stack into an array of their own.
    ///
    /// Not `ContiguousArray(unsafeUninitializedCapacity:)`: it allocates through an unspecialized
    /// function of the standard library that looks the storage class up at run time on every call,
    /// which costs more than the rest of closing a small object.
    @inline(__always)
    mutating func popTop(from start: Int) -> ContiguousArray<Element> {
        let elements = ContiguousArray(MovedElements(base: base + start, count: count - start))
        count = start
        return elements
    }

    /// Removes the elements from `start` to the top.
    mutating func removeTop(from start: Int) {
        (base + start).deinitialize(count: count - start)
        count = start
    }

    private mutating func grow() {
        let larger = capacity == 0 ? initialCapacity : capacity * 2
        let buffer = UnsafeMutablePointer<Element>.allocate(capacity: larger)
        if capacity > 0 {
            buffer.moveInitialize(from: base, count: count)
            base.deallocate()
        }
        base = buffer
        capacity = larger
    }
}

/// Elements on a stack, as a collection whose copy into new storage moves them: the stack forgets
/// them right after (see `ParseStack.popTop`), so they are neither retained nor released.
private struct MovedElements<Element>: RandomAccessCollection {
    let base: UnsafeMutablePointer<Element>
    let count: Int

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(index: Int) -> Element { base[index] }

    func makeIterator() -> Iterator { Iterator(base: base, index: 0, count: count) }

    func _copyContents(initializing buffer: UnsafeMutableBufferPointer<Element>) -> (Iterator, Int) {
        precondition(buffer.count >= count, "no room for the elements")
        if count > 0 { buffer.baseAddress!.moveInitialize(from: base, count: count) }
        return (Iterator(base: base, index: count, count: count), count)
    }

    struct Iterator: IteratorProtocol {
        let base: UnsafeMutablePointer<Element>
        var index: Int
        let count: Int

        mutating func next() -> Element? {
            guard index < count else { return nil }
            defer { index += 1 }
            return base[index]
        }
    }
}
