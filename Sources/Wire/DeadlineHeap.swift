/// Something a `DeadlineHeap` holds: it carries its own position in the heap,
/// so it can be taken out in O(log n) without a search.
protocol DeadlineHeapElement: AnyObject {
    /// The element's index in its heap's storage; nil while it is in no heap.
    /// Written only by `DeadlineHeap`.
    var heapIndex: Int? { get set }
}

/// A binary min-heap of elements by deadline: the earliest first, elements
/// with the same deadline in the order they were inserted. Sans-io: it has
/// no clock; deadlines and `now` are nanoseconds on whatever monotonic clock
/// the caller uses (`EventLoop`: Dispatch's uptime clock).
///
/// Invariants: every element in the heap has `heapIndex` equal to its index
/// in `entries`; an element not in the heap has `heapIndex == nil`; an
/// element is in at most one heap, once; each entry's key is no earlier than
/// its parent's.
struct DeadlineHeap<Element: DeadlineHeapElement> {
    private struct Entry {
        let deadline: UInt64
        /// Insertion order, which breaks ties between equal deadlines.
        let sequence: UInt64
        let element: Element

        func precedes(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : sequence < other.sequence
        }
    }

    private var entries: [Entry] = []
    private var nextSequence: UInt64 = 0

    init() {}

    /// How many elements wait.
    var count: Int { entries.count }

    var isEmpty: Bool { entries.isEmpty }

    /// The deadline of the earliest element; nil when the heap is empty.
    var earliestDeadline: UInt64? { entries.first?.deadline }

    /// Adds `element`, due at `deadline`. The element must be in no heap.
    mutating func insert(_ element: Element, deadline: UInt64) {
        precondition(element.heapIndex == nil, "element already in a heap")
        entries.append(Entry(deadline: deadline, sequence: nextSequence, element: element))
        nextSequence &+= 1
        element.heapIndex = entries.count - 1
        siftUp(from: entries.count - 1)
    }

    /// Takes `element` out; false when it was in no heap (already removed or
    /// popped). With the last element goes the storage.
    @discardableResult
    mutating func remove(_ element: Element) -> Bool {
        guard let index = element.heapIndex else { return false }
        precondition(index < entries.count && entries[index].element === element, "element in another heap")
        take(at: index)
        return true
    }

    /// Takes out every element due at `now` (deadline ≤ `now`), earliest
    /// first. Elements inserted after the call are not in the answer even if due.
    mutating func popDue(at now: UInt64) -> [Element] {
        var due: [Element] = []
        while let first = entries.first, first.deadline <= now {
            due.append(first.element)
            take(at: 0)
        }
        return due
    }

    /// Removes the entry at `index`, moving the last one into its place.
    private mutating func take(at index: Int) {
        entries[index].element.heapIndex = nil
        let last = entries.count - 1
        if index != last {
            entries.swapAt(index, last)
            entries[index].element.heapIndex = index
        }
        entries.removeLast()
        if entries.isEmpty {
            // An empty heap holds no storage (a burst of connections gone idle
            // and closed leaves nothing behind).
            entries = []
        } else if index < entries.count {
            siftDown(from: index)
            siftUp(from: index)
        }
    }

    private mutating func siftUp(from start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].precedes(entries[parent]) else { return }
            exchange(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < entries.count else { return }
            let right = left + 1
            var first = left
            if right < entries.count, entries[right].precedes(entries[left]) { first = right }
            guard entries[first].precedes(entries[parent]) else { return }
            exchange(parent, first)
            parent = first
        }
    }

    private mutating func exchange(_ a: Int, _ b: Int) {
        entries.swapAt(a, b)
        entries[a].element.heapIndex = a
        entries[b].element.heapIndex = b
    }
}
