internal import COpenSSL

/// Helpers over OpenSSL memory BIOs (`BIO_s_mem`), the sink for OpenSSL's
/// text printers. (A `TLSEngine` uses its own `EngineBIO`.)
enum MemoryBIO {
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

    /// Removes every byte pending in a memory BIO and decodes it as UTF-8.
    static func drainString(_ bio: OpaquePointer) -> String {
        String(decoding: drain(bio), as: UTF8.self)
    }
}
