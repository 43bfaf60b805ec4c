internal import COpenSSL

/// The one BIO between a `TLSEngine`'s `SSL` and its caller: a custom
/// source/sink BIO, used for both directions, that reads the ciphertext fed
/// to the engine from `TLSEngine.inboundCiphertext` and appends what OpenSSL
/// writes to `TLSEngine.outboundCiphertext`.
///
/// One small BIO instead of two memory BIOs (each a `BIO`, its lock, two
/// `BUF_MEM`s and a buffer): an idle connection holds ~0.4 KiB less, and the
/// ciphertext for the peer is handed out as the array OpenSSL wrote into,
/// with no copy out of a memory BIO.
///
/// Invariants: the BIO's data is the engine, unretained, set right after the
/// engine is made; the `SSL` owns the BIO and the engine frees the `SSL` in
/// its `deinit`, so the BIO never outlives the engine. OpenSSL calls these
/// callbacks only during the engine's own `SSL_*` calls, on its loop.
enum EngineBIO {
    /// Makes a BIO for an engine; its data is set with `attach`.
    static func make() -> OpaquePointer? {
        BIO_new(method)
    }

    /// Points `bio` at `engine` (unretained).
    static func attach(_ bio: OpaquePointer, to engine: TLSEngine) {
        BIO_set_data(bio, Unmanaged.passUnretained(engine).toOpaque())
    }

    /// The method table, made once per process. `nonisolated(unsafe)`: it
    /// is never changed once made (Swift makes a static `let` once, thread-safely).
    nonisolated(unsafe) private static let method: OpaquePointer = {
        let type = BIO_get_new_index() | BIO_TYPE_SOURCE_SINK
        guard let method = BIO_meth_new(type, "intact TLS engine") else {
            preconditionFailure("OpenSSL could not make a BIO method")
        }
        BIO_meth_set_write_ex(method, write)
        BIO_meth_set_read_ex(method, read)
        BIO_meth_set_ctrl(method, control)
        BIO_meth_set_create(method, create)
        return method
    }()

    private static func engine(_ bio: OpaquePointer?) -> TLSEngine? {
        guard let bio, let raw = BIO_get_data(bio) else { return nil }
        return Unmanaged<TLSEngine>.fromOpaque(raw).takeUnretainedValue()
    }

    private static let create: @convention(c) (OpaquePointer?) -> Int32 = { bio in
        BIO_set_init(bio, 1)
        return 1
    }

    /// Appends what OpenSSL writes for the peer; never blocks, never fails.
    private static let write: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int, UnsafeMutablePointer<Int>?) -> Int32 = {
        bio, data, length, written in
        intact_BIO_clear_retry_flags(bio)
        guard let engine = engine(bio), let data, let written else { return 0 }
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: length)
        engine.outboundCiphertext.append(contentsOf: bytes)
        written.pointee = length
        return 1
    }

    /// Gives OpenSSL the ciphertext fed and not yet read; with none, asks it to retry later.
    private static let read: @convention(c) (OpaquePointer?, UnsafeMutablePointer<CChar>?, Int, UnsafeMutablePointer<Int>?) -> Int32 = {
        bio, data, length, readBytes in
        intact_BIO_clear_retry_flags(bio)
        guard let engine = engine(bio), let data, let readBytes else { return 0 }
        let count = min(length, engine.inboundPendingCount)
        guard count > 0 else {
            readBytes.pointee = 0
            intact_BIO_set_retry_read(bio)
            return 0
        }
        engine.consumeInbound(count, into: UnsafeMutableRawPointer(data))
        readBytes.pointee = count
        return 1
    }

    /// Pending counts, flush (nothing to flush: the bytes already wait in the
    /// engine) and end of input as a memory BIO reports it; every other
    /// request is not supported.
    private static let control: @convention(c) (OpaquePointer?, Int32, Int, UnsafeMutableRawPointer?) -> Int = {
        bio, command, _, _ in
        switch command {
        case BIO_CTRL_PENDING: return engine(bio)?.inboundPendingCount ?? 0
        case BIO_CTRL_WPENDING: return engine(bio)?.outboundCiphertext.count ?? 0
        case BIO_CTRL_FLUSH: return 1
        case BIO_CTRL_EOF: return engine(bio)?.inboundPendingCount == 0 ? 1 : 0
        default: return 0
        }
    }
}
