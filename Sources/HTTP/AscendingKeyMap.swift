/// Values kept under keys that arrive in ascending order: what a connection
/// keeps per HTTP/2 stream (`HTTP2StreamMap`: the session, the connection
/// layer and the engines) and per exchange in progress (the proxy's
/// `ExchangeTable`).
///
/// Two arrays in step, sorted by key, searched by bisection (not a
/// `Dictionary`, which hashes the key with SipHash on every lookup:
/// Docs/performance.md#http2-stream-state-changed-in-place); a connection
/// has few streams or exchanges at a time (at most
/// `HTTP2Configuration.maxConcurrentStreams`), and a new one's key is above
/// every earlier one (a new stream's id, RFC 9113 §5.1.1; an exchange's
/// sequence on its connection), so an insertion is an append.
/// Changing a value in place goes through `values[index]` (an array
/// element: no coroutine frame, no copy of the value).
///
/// Invariants: `keys` is strictly ascending; `keys.count == values.count`;
/// `values[i]` belongs to `keys[i]`. Iteration (`keys`, `values`) is in
/// ascending key order.
///
/// `@inlinable`, so that the drivers in Transport and Proxy, which hold one
/// of stream objects or exchange flows, get it specialised.
public struct AscendingKeyMap<Key: Comparable, Value> {
    @usableFromInline var ids: [Key] = []
    /// The values, `values[i]` for `keys[i]`. Mutable in place; its
    /// length must not be changed from outside.
    public var values: [Value] = []

    @inlinable public init() {}

    /// The keys, ascending.
    @inlinable public var keys: [Key] { ids }
    @inlinable public var count: Int { ids.count }
    @inlinable public var isEmpty: Bool { ids.isEmpty }

    /// Where `id` is in `keys` and `values`, or nil. The newest key is
    /// looked at first: it is the one most lookups are for (over HTTP/1.1
    /// the only exchange; over HTTP/2 the stream just opened), and one
    /// comparison costs less than a bisection's loop, even of one key.
    @inlinable public func index(forKey id: Key) -> Int? {
        if let last = ids.last, last == id { return ids.count - 1 }
        let at = position(of: id)
        return at < ids.count && ids[at] == id ? at : nil
    }

    /// The value under `id`; setting nil removes it.
    @inlinable public subscript(id: Key) -> Value? {
        get { index(forKey: id).map { values[$0] } }
        set {
            // Consumed, not bound: a binding would copy a large value (an exchange flow) once more.
            switch consume newValue {
            case .some(let value): insert(value, forKey: id)
            case .none: removeValue(forKey: id)
            }
        }
    }

    /// Sets the value under `id` (added when absent); returns the old value.
    @discardableResult
    @inlinable public mutating func updateValue(_ value: consuming Value, forKey id: Key) -> Value? {
        guard let at = index(forKey: id) else {
            insert(value, forKey: id)
            return nil
        }
        swap(&value, &values[at])
        return value
    }

    /// Sets the value under `id` (added when absent), returning nothing: no
    /// `Optional` of a large value is made (an empty one is written as a
    /// zeroed value). A key above every key, the usual case (the first one
    /// included), is appended; only a key out of order goes through
    /// `Array.insert`, which passes the value through a `CollectionOfOne`
    /// (a copy).
    @inlinable public mutating func insert(_ value: consuming Value, forKey id: Key) {
        if ids.last.map({ id > $0 }) ?? true {
            ids.append(id)
            values.append(value)
            return
        }
        let at = position(of: id)
        if at < ids.count && ids[at] == id {
            values[at] = value
            return
        }
        ids.insert(id, at: at)
        values.insert(value, at: at)
    }

    /// Removes `id`; returns its value, or nil when it was absent.
    @discardableResult
    @inlinable public mutating func removeValue(forKey id: Key) -> Value? {
        guard let at = index(forKey: id) else { return nil }
        return remove(at: at)
    }

    /// Removes the key and value at `index` (from `index(forKey:)`); returns the value.
    @discardableResult
    @inlinable public mutating func remove(at index: Int) -> Value {
        ids.remove(at: index)
        return values.remove(at: index)
    }

    /// Removes every key and value, and the values' storage. The keys' goes
    /// too unless `keepingKeyCapacity`: a map filled and emptied one entry at
    /// a time whose values are large (an HTTP/1.1 connection's exchange
    /// flows, a few KiB each) then keeps only a few words between entries
    /// and makes one array per entry, not two.
    @inlinable public mutating func removeAll(keepingKeyCapacity: Bool = false) {
        ids.removeAll(keepingCapacity: keepingKeyCapacity)
        values.removeAll()
    }

    /// The first index whose key is not below `id` (bisection).
    @inlinable func position(of id: Key) -> Int {
        var low = 0, high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// The open streams of one HTTP/2 connection, each with a value, by stream id.
public typealias HTTP2StreamMap<Value> = AscendingKeyMap<HTTP2StreamID, Value>
