/// The open streams of one HTTP/2 connection, each with a value: what the
/// session, the connection layer and the engines keep per stream.
///
/// Two arrays in step, sorted by stream id, searched by bisection (not a
/// `Dictionary`: Docs/performance.md#http2-stream-state-changed-in-place);
/// a connection has few streams (at most
/// `HTTP2Configuration.maxConcurrentStreams`), and a new stream's id is
/// above every earlier one (RFC 9113 §5.1.1), so an insertion is an append.
/// Changing a value in place goes through `values[index]` (an array
/// element: no coroutine frame, no copy of the value).
///
/// Invariants: `ids` is strictly ascending; `ids.count == values.count`;
/// `values[i]` belongs to stream `ids[i]`. Iteration (`keys`, `values`)
/// is in ascending id order.
///
/// `@inlinable`, so that the drivers in Transport, which hold one of stream
/// objects, get it specialised.
public struct HTTP2StreamMap<Value> {
    @usableFromInline var ids: [HTTP2StreamID] = []
    /// The values, `values[i]` for stream `keys[i]`. Mutable in place; its
    /// length must not be changed from outside.
    public var values: [Value] = []

    @inlinable public init() {}

    /// The stream ids, ascending.
    @inlinable public var keys: [HTTP2StreamID] { ids }
    @inlinable public var count: Int { ids.count }
    @inlinable public var isEmpty: Bool { ids.isEmpty }

    /// Where stream `id` is in `keys` and `values`, or nil.
    @inlinable public func index(forKey id: HTTP2StreamID) -> Int? {
        let at = position(of: id)
        return at < ids.count && ids[at] == id ? at : nil
    }

    /// The value of stream `id`; setting nil removes the stream.
    @inlinable public subscript(id: HTTP2StreamID) -> Value? {
        get { index(forKey: id).map { values[$0] } }
        set {
            if let newValue { updateValue(newValue, forKey: id) } else { removeValue(forKey: id) }
        }
    }

    /// Sets the value of stream `id` (added when absent); returns the old value.
    @discardableResult
    @inlinable public mutating func updateValue(_ value: Value, forKey id: HTTP2StreamID) -> Value? {
        if let last = ids.last, id > last {
            ids.append(id)
            values.append(value)
            return nil
        }
        let at = position(of: id)
        if at < ids.count && ids[at] == id {
            let old = values[at]
            values[at] = value
            return old
        }
        ids.insert(id, at: at)
        values.insert(value, at: at)
        return nil
    }

    /// Removes stream `id`; returns its value, or nil when it was absent.
    @discardableResult
    @inlinable public mutating func removeValue(forKey id: HTTP2StreamID) -> Value? {
        guard let at = index(forKey: id) else { return nil }
        ids.remove(at: at)
        return values.remove(at: at)
    }

    /// The first index whose id is not below `id` (bisection).
    @inlinable func position(of id: HTTP2StreamID) -> Int {
        var low = 0, high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
