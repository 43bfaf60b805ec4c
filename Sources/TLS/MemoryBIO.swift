internal import COpenSSL

/// Helpers over OpenSSL memory BIOs (`BIO_s_mem`), the byte pipes between a
/// `TLSEngine` and its caller and the sink for OpenSSL's text printers.
enum MemoryBIO {
    /// Appends bytes to a memory BIO. A memory BIO grows as needed, so this
    /// only fails on allocation failure, which is treated as fatal.
    static func write(_ bio: OpaquePointer, _ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count {
            let chunk = Int32(clamping: bytes.count - offset)
            let written = BIO_write(bio, bytes.baseAddress! + offset, chunk)
            precondition(written > 0, "OpenSSL memory BIO could not grow")
            offset += Int(written)
        }
    }

    /// Removes and returns every byte pending in a memory BIO.
    static func drain(_ bio: OpaquePointer) -> [UInt8] {
        let pending = Int(BIO_ctrl_pending(bio))
        guard pending > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: pending) { buffer, count in
            var total = 0
            while total < pending {
                let read = BIO_read(bio, buffer.baseAddress! + total, Int32(clamping: pending - total))
                guard read > 0 else { break }
                total += Int(read)
            }
            count = total
        }
    }

    /// Frees the buffer of an empty memory BIO when it is larger than `limit` bytes
    /// (the BIO grows a new one on its next write). Returns whether it did; a BIO
    /// that holds bytes, or a small buffer, is left as it is.
    @discardableResult
    static func releaseBuffer(_ bio: OpaquePointer, keeping limit: Int) -> Bool {
        intact_BIO_mem_release_if_empty(bio, limit) == 1
    }

    /// The size of a memory BIO's buffer, in use or not.
    static func capacity(_ bio: OpaquePointer) -> Int {
        Int(intact_BIO_mem_capacity(bio))
    }

    /// Removes every byte pending in a memory BIO and decodes it as UTF-8.
    static func drainString(_ bio: OpaquePointer) -> String {
        String(decoding: drain(bio), as: UTF8.self)
    }
}
