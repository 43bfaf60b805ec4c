/// A bounded map that evicts the least recently used entry when full.
///
/// Lookups and insertions are O(1): entries live in an array threaded by a
/// doubly linked recency list (indices, not references), and a dictionary
/// maps keys to slots. Not thread-safe: the owner serialises access (the
/// certificate authority keeps it behind a mutex).
struct LRUCache<Key: Hashable, Value> {
    private struct Entry {
        var key: Key
        var value: Value
        var newer: Int?
        var older: Int?
    }

    /// The most entries kept; at least 1.
    let capacity: Int
    private var entries: [Entry] = []
    private var slots: [Key: Int] = [:]
    private var newest: Int?
    private var oldest: Int?

    init(capacity: Int) {
        precondition(capacity >= 1, "an LRU cache holds at least one entry")
        self.capacity = capacity
    }

    /// Number of entries held.
    var count: Int { slots.count }

    /// The value for `key`, marking it most recently used.
    mutating func value(for key: Key) -> Value? {
        guard let slot = slots[key] else { return nil }
        moveToNewest(slot)
        return entries[slot].value
    }

    /// Stores `value` as the most recently used entry, replacing any value
    /// for `key` and evicting the least recently used entry when full.
    mutating func insert(_ value: Value, for key: Key) {
        if let slot = slots[key] {
            entries[slot].value = value
            moveToNewest(slot)
            return
        }
        let slot: Int
        if entries.count < capacity {
            slot = entries.count
            entries.append(Entry(key: key, value: value, newer: nil, older: nil))
        } else {
            // Full: reuse the oldest entry's slot.
            slot = oldest!
            unlink(slot)
            slots[entries[slot].key] = nil
            entries[slot] = Entry(key: key, value: value, newer: nil, older: nil)
        }
        slots[key] = slot
        linkAsNewest(slot)
    }

    private mutating func moveToNewest(_ slot: Int) {
        guard newest != slot else { return }
        unlink(slot)
        linkAsNewest(slot)
    }

    private mutating func unlink(_ slot: Int) {
        let (newer, older) = (entries[slot].newer, entries[slot].older)
        if let newer { entries[newer].older = older } else { newest = older }
        if let older { entries[older].newer = newer } else { oldest = newer }
        entries[slot].newer = nil
        entries[slot].older = nil
    }

    private mutating func linkAsNewest(_ slot: Int) {
        entries[slot].older = newest
        entries[slot].newer = nil
        if let newest { entries[newest].newer = slot }
        newest = slot
        if oldest == nil { oldest = slot }
    }
}
