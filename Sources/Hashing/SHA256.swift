internal import COpenSSL

/// Incremental SHA-256 over OpenSSL's EVP interface.
///
/// Invariants: the `EVP_MD_CTX` is owned by exactly one `SHA256` value's
/// storage and freed in its `deinit`; `finalize()` may be called once, after
/// which `update` is a programming error. Copying a `SHA256` value copies the
/// hashing state (copy-on-write), so a running digest can be forked, e.g. to
/// read an intermediate value.
public struct SHA256: Sendable {
    /// The size of a digest in bytes.
    public static let byteCount = 32

    private var storage: Storage

    public init() {
        storage = Storage()
    }

    /// Feeds bytes into the digest.
    public mutating func update<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if !isKnownUniquelyReferenced(&storage) {
            storage = storage.copy()
        }
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            storage.update(UnsafeRawBufferPointer(buffer))
        }
        if done == nil {
            let array = Array(bytes)
            array.withUnsafeBytes { storage.update($0) }
        }
    }

    /// Feeds the UTF-8 bytes of a string into the digest.
    public mutating func update(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            storage.update(UnsafeRawBufferPointer(utf8))
        }
    }

    /// Returns the 32-byte digest. The value must not be updated afterwards.
    public mutating func finalize() -> [UInt8] {
        if !isKnownUniquelyReferenced(&storage) {
            storage = storage.copy()
        }
        return storage.finalize()
    }

    /// One-shot digest of a byte collection: no context is allocated (see
    /// `intact_sha256_oneshot`), so the many small digests of a head cost
    /// only the hashing.
    public static func hash<Bytes: Collection>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        let digest: [UInt8]? = bytes.withContiguousStorageIfAvailable { oneShot(UnsafeRawBufferPointer($0)) }
        if let digest { return digest }
        return Array(bytes).withUnsafeBytes { oneShot($0) }
    }

    private static func oneShot(_ buffer: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: byteCount) { out, count in
            intact_sha256_oneshot(buffer.baseAddress, buffer.count, out.baseAddress)
            count = byteCount
        }
    }

    /// One-shot digest of a string's UTF-8 bytes.
    public static func hash(_ string: String) -> [UInt8] {
        hash(Array(string.utf8))
    }

    /// The SHA-256 implementation, fetched from OpenSSL's default provider
    /// once per process: `EVP_sha256()` makes every `EVP_DigestInit` fetch it
    /// again, which dominates the cost of the many small digests of a head.
    /// `@unchecked Sendable`: a fetched `EVP_MD` is immutable and OpenSSL 3
    /// allows it to be used from any thread; it is never freed.
    private struct Algorithm: @unchecked Sendable {
        let md: OpaquePointer

        static let sha256: Algorithm = {
            guard let md = EVP_MD_fetch(nil, "SHA2-256", nil) else {
                fatalError("OpenSSL's default provider has no SHA2-256")
            }
            return Algorithm(md: md)
        }()
    }

    /// Owns the OpenSSL context. `@unchecked Sendable`: a `SHA256` value is
    /// mutated only through `isKnownUniquelyReferenced` copy-on-write, so no
    /// two threads ever touch one context.
    private final class Storage: @unchecked Sendable {
        let context: OpaquePointer

        init() {
            guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex2(context, Algorithm.sha256.md, nil) == 1 else {
                fatalError("OpenSSL could not initialise SHA-256")
            }
            self.context = context
        }

        private init(copying other: OpaquePointer) {
            guard let context = EVP_MD_CTX_new(), EVP_MD_CTX_copy_ex(context, other) == 1 else {
                fatalError("OpenSSL could not copy a SHA-256 context")
            }
            self.context = context
        }

        func copy() -> Storage { Storage(copying: context) }

        func update(_ buffer: UnsafeRawBufferPointer) {
            guard buffer.count > 0 else { return }
            EVP_DigestUpdate(context, buffer.baseAddress, buffer.count)
        }

        func finalize() -> [UInt8] {
            var out = [UInt8](repeating: 0, count: SHA256.byteCount)
            var length: UInt32 = 0
            out.withUnsafeMutableBufferPointer { _ = EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
            return out
        }

        deinit { EVP_MD_CTX_free(context) }
    }
}
