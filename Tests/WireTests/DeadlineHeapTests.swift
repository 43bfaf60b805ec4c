import XCTest
@testable import Wire

final class DeadlineHeapTests: XCTestCase {
    final class Item: DeadlineHeapElement {
        let name: String
        var heapIndex: Int?
        init(_ name: String) { self.name = name }
    }

    func testPopsDueElementsEarliestFirstAndEqualDeadlinesInInsertionOrder() {
        var heap = DeadlineHeap<Item>()
        let items = ["c30", "a10", "b20", "a10bis", "d40"].map(Item.init)
        for (item, deadline) in zip(items, [30, 10, 20, 10, 40] as [UInt64]) { heap.insert(item, deadline: deadline) }
        XCTAssertEqual(heap.earliestDeadline, 10)
        XCTAssertEqual(heap.popDue(at: 9).map(\.name), [])
        XCTAssertEqual(heap.popDue(at: 20).map(\.name), ["a10", "a10bis", "b20"], "a deadline equal to now is due")
        XCTAssertEqual(heap.count, 2)
        XCTAssertEqual(heap.earliestDeadline, 30)
        XCTAssertEqual(heap.popDue(at: .max).map(\.name), ["c30", "d40"])
        XCTAssertTrue(heap.isEmpty)
        XCTAssertNil(heap.earliestDeadline)
        XCTAssertTrue(items.allSatisfy { $0.heapIndex == nil })
    }

    func testRemovedElementsNeverPopAndRemovingTwiceIsRefused() {
        var heap = DeadlineHeap<Item>()
        let early = Item("early"), middle = Item("middle"), late = Item("late")
        heap.insert(late, deadline: 300)
        heap.insert(early, deadline: 100)
        heap.insert(middle, deadline: 200)
        XCTAssertTrue(heap.remove(early))
        XCTAssertNil(early.heapIndex)
        XCTAssertFalse(heap.remove(early))
        XCTAssertEqual(heap.earliestDeadline, 200)
        XCTAssertEqual(heap.popDue(at: 1000).map(\.name), ["middle", "late"])
        XCTAssertFalse(heap.remove(late), "a popped element is in no heap")
        // Popped or removed, an element can wait again.
        heap.insert(early, deadline: 5)
        XCTAssertEqual(heap.popDue(at: 5).map(\.name), ["early"])
    }

    /// Random inserts, removals and pops against a sorted list: same order, same
    /// elements, and every element's index names its own entry.
    func testMatchesASortedModelUnderRandomOperations() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            var heap = DeadlineHeap<Item>()
            var model: [(deadline: UInt64, order: Int, item: Item)] = []
            var order = 0
            var now: UInt64 = 0
            for _ in 0..<400 {
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<5:
                    let item = Item("\(order)")
                    let deadline = now + UInt64.random(in: 0..<50, using: &generator)
                    heap.insert(item, deadline: deadline)
                    model.append((deadline, order, item))
                    order += 1
                case 5..<8:
                    guard !model.isEmpty else { continue }
                    let index = Int.random(in: 0..<model.count, using: &generator)
                    XCTAssertTrue(heap.remove(model[index].item))
                    model.remove(at: index)
                default:
                    now += UInt64.random(in: 0..<20, using: &generator)
                    model.sort { ($0.deadline, $0.order) < ($1.deadline, $1.order) }
                    let due = model.prefix { $0.deadline <= now }
                    XCTAssertEqual(heap.popDue(at: now).map(\.name), due.map(\.item.name))
                    model.removeFirst(due.count)
                }
                XCTAssertEqual(heap.count, model.count)
                XCTAssertEqual(heap.earliestDeadline, model.map(\.deadline).min())
                XCTAssertTrue(model.allSatisfy { $0.item.heapIndex != nil })
            }
            XCTAssertEqual(heap.popDue(at: .max).map(\.name),
                           model.sorted { ($0.deadline, $0.order) < ($1.deadline, $1.order) }.map(\.item.name))
        }
    }
}
