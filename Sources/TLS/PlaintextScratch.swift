import Synchronization

/// Buffers `TLSEngine.readPlaintext` decrypts into before it copies the
/// plaintext out at its exact size, kept between reads and shared by every
/// engine of the process (`shared`).
///
/// A read must offer OpenSSL room for everything that may come out (the
/// ciphertext pending plus a whole record, so 16 KiB more than the bytes
/// fed); a borrowed buffer costs one uncontended lock each way instead of
/// that room allocated per read (Docs/performance.md#body-copies).
///
/// Invariants: a buffer is lent to one caller at a time, for the duration of
/// `withBuffer`'s body only; the pool keeps at most `keptBuffers` buffers, each
/// of at most `keptCapacity` bytes (a bigger one, needed once for an unusually
/// large read, is freed after use). A buffer's bytes are never read before
/// being written: callers treat it as uninitialised memory.
final class PlaintextScratch: Sendable {
    /// The pool every `TLSEngine` reads through.
    static let shared = PlaintextScratch()

    /// At most this many buffers stay in the pool (one per thread reading at once).
    let keptBuffers: Int
    /// A buffer bigger than this is freed after use instead of kept.
    let keptCapacity: Int
    /// The smallest buffer made.
    let minimumCapacity: Int

    /// A buffer free to lend. `@unchecked Sendable`: it is owned by the pool
    /// or by the one caller it is lent to, never by two threads at once.
    private struct Slab: @unchecked Sendable {
        let bytes: UnsafeMutableRawBufferPointer
    }

    /// Buffers free to lend.
    private let pool = Mutex<[Slab]>([])

    /// The defaults: room for any read `TLSEngine.readPlaintext` decrypts
    /// here (a larger one, from `TLSEngine.directDecryptRoom` up, is
    /// decrypted into the array it returns), below glibc's 128 KiB mmap
    /// threshold; a few buffers, as many threads read at once as the proxy
    /// has event loops.
    init(keptBuffers: Int = 8, keptCapacity: Int = 256 * 1024, minimumCapacity: Int = 64 * 1024) {
        self.keptBuffers = keptBuffers
        self.keptCapacity = keptCapacity
        self.minimumCapacity = minimumCapacity
    }

    deinit {
        pool.withLock { buffers in
            for slab in buffers { slab.bytes.deallocate() }
        }
    }

    /// Lends `body` a buffer of at least `capacity` bytes, taken from the pool
    /// (or made, when none there is big enough) and given back afterwards.
    func withBuffer<Result>(capacity: Int, _ body: (UnsafeMutableRawBufferPointer) -> Result) -> Result {
        let buffer = take(capacity: capacity)
        defer { giveBack(buffer) }
        return body(buffer)
    }

    /// How many buffers wait in the pool (tests read it).
    var pooledCount: Int { pool.withLock { $0.count } }

    private func take(capacity: Int) -> UnsafeMutableRawBufferPointer {
        let found = pool.withLock { buffers -> Slab? in
            guard let index = buffers.lastIndex(where: { $0.bytes.count >= capacity }) else { return nil }
            return buffers.remove(at: index)
        }
        return found?.bytes ?? .allocate(byteCount: max(capacity, minimumCapacity), alignment: 16)
    }

    private func giveBack(_ buffer: UnsafeMutableRawBufferPointer) {
        let slab = Slab(bytes: buffer)
        let kept = buffer.count <= keptCapacity && pool.withLock { buffers -> Bool in
            guard buffers.count < keptBuffers else { return false }
            buffers.append(slab)
            return true
        }
        if !kept { buffer.deallocate() }
    }
}
