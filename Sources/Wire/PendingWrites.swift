import Glibc

/// The bytes a connection has accepted for writing but the kernel has not yet
/// taken: a queue of chunks, the first of which may be partly written.
///
/// Chunks are kept as given (no copying into a ring) and handed to `writev(2)`
/// together, so many small writes in one loop turn cost one system call.
struct PendingWrites {
    /// Most chunks gathered into one `writev`; far below `IOV_MAX` (1024),
    /// and enough to cover the watermark with typical chunk sizes.
    static let maxGather = 64

    private var chunks: [[UInt8]] = []
    /// Index of the first chunk not yet fully written.
    private var head = 0
    /// Bytes of `chunks[head]` already written.
    private var headOffset = 0
    /// Bytes still to write.
    private(set) var byteCount = 0

    var isEmpty: Bool { byteCount == 0 }

    /// How many chunks the queue's storage has room for (tests read it).
    var chunkCapacity: Int { chunks.capacity }

    /// Queues `bytes` behind everything already pending. Empty chunks are dropped.
    mutating func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        chunks.append(bytes)
        byteCount += bytes.count
    }

    /// Forgets the first `count` pending bytes, which the kernel has taken.
    mutating func consume(_ count: Int) {
        precondition(count <= byteCount, "consumed more bytes than pending")
        byteCount -= count
        var left = count
        while left > 0 {
            let available = chunks[head].count - headOffset
            if left < available {
                headOffset += left
                left = 0
            } else {
                left -= available
                head += 1
                headOffset = 0
            }
        }
        if byteCount == 0 {
            // No storage kept: an idle keep-alive connection would hold it for
            // as long as it lives (one small allocation per burst instead).
            chunks = []
            head = 0
        } else if head >= 32 && head * 2 >= chunks.count {
            chunks.removeFirst(head)
            head = 0
        }
    }

    /// Drops everything pending (on abort or failure).
    mutating func removeAll() {
        chunks.removeAll()
        head = 0
        headOffset = 0
        byteCount = 0
    }

    /// Calls `body` with `iovec`s over the first (up to `maxGather`) pending
    /// chunks and their total size; returns what `body` returns. The pointers
    /// are valid only during `body`.
    func withIOVecs<Result>(_ body: (UnsafeBufferPointer<iovec>, Int) -> Result) -> Result {
        let end = min(chunks.count, head + PendingWrites.maxGather)
        // On the stack (64 × 16 bytes): no heap allocation per `writev`.
        return withUnsafeTemporaryAllocation(of: iovec.self, capacity: PendingWrites.maxGather) { vectors in
            gather(from: head, to: end, into: vectors, total: 0, body)
        }
    }

    /// Builds the `iovec` list by nesting one `withUnsafeBytes` per chunk, so
    /// every chunk's storage stays pinned while `body` runs.
    private func gather<Result>(
        from index: Int, to end: Int, into vectors: UnsafeMutableBufferPointer<iovec>, total: Int,
        _ body: (UnsafeBufferPointer<iovec>, Int) -> Result
    ) -> Result {
        guard index < end else {
            return body(UnsafeBufferPointer(rebasing: vectors[..<(end - head)]), total)
        }
        let skip = index == head ? headOffset : 0
        return chunks[index].withUnsafeBytes { raw in
            let base = UnsafeMutableRawPointer(mutating: raw.baseAddress!) + skip
            (vectors.baseAddress! + (index - head)).initialize(to: iovec(iov_base: base, iov_len: raw.count - skip))
            return gather(from: index + 1, to: end, into: vectors, total: total + raw.count - skip, body)
        }
    }
}
