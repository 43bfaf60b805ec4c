internal import COpenSSL

/// The function a recording digests message content with: every head, field,
/// target, body, trailer and relayed-stream digest of one recording goes
/// through one value of this type.
///
/// - `sha256`: plain SHA-256, for recordings read back from older builds
///   and for digests that must be comparable with no key.
/// - `hmacSHA256`: HMAC-SHA-256 (RFC 2104) under the setup's digest key
///   (`SecretDigester`). A message part that carries a secret (a sign-in form
///   `pw=…`, a `Cookie:` line, a `?token=` target) then has a digest that
///   cannot be tested against guesses without the key, while the taps that
///   share the key still get equal digests for equal content.
///
/// Both give 32 bytes. The key's precomputed states are loaded once, in
/// `init`; a digest copies them (no OpenSSL object is allocated per digest)
/// and the value is shared read-only, so one value serves every thread.
public struct DigestFunction: Sendable, Hashable, CustomStringConvertible {
    /// How the digests of a recording were taken, as its header names it.
    public enum Algorithm: String, Sendable, Hashable, Codable {
        case sha256 = "sha256"
        case hmacSHA256 = "hmac-sha256"
    }

    /// The size of a digest in bytes.
    public static let byteCount = 32

    public var algorithm: Algorithm { key.algorithm }
    /// For `hmacSHA256`, the key's fingerprint (`SecretDigester.fingerprint`); nil for `sha256`.
    public var keyFingerprint: String? { key.fingerprint }
    /// The one stored reference: the algorithm and fingerprint live with the
    /// key's states, so copying a function (a recorder, a memo, a body's
    /// digest each hold one) retains one object, not it and a `String`.
    private let key: Key

    /// Plain SHA-256.
    public static let sha256 = DigestFunction()

    private init() {
        key = Key(algorithm: .sha256, fingerprint: nil, hmac: nil)
    }

    /// HMAC-SHA-256 under `key`, named by `fingerprint`.
    init(hmacKey: [UInt8], fingerprint: String) {
        key = Key(algorithm: .hmacSHA256, fingerprint: fingerprint, hmac: hmacKey)
    }

    /// The digest of one contiguous run of bytes.
    public func digest<Bytes: Collection>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        let digest: [UInt8]? = bytes.withContiguousStorageIfAvailable { oneShot(UnsafeRawBufferPointer($0)) }
        if let digest { return digest }
        return Array(bytes).withUnsafeBytes { oneShot($0) }
    }

    private func oneShot(_ buffer: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: DigestFunction.byteCount) { out, count in
            digest(buffer, into: UnsafeMutableRawPointer(out.baseAddress!))
            count = DigestFunction.byteCount
        }
    }

    /// The digest of `buffer`, stored in the `byteCount` bytes at `out`: no
    /// array, for callers that keep digests inline (`SHA256Digest`).
    public func digest(_ buffer: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) {
        guard buffer.count > 0 else { return key.copyDigestOfNothing(to: out) }
        intact_digest_oneshot(key.state, buffer.baseAddress, buffer.count,
                              out.assumingMemoryBound(to: UInt8.self))
    }

    /// A digest fed in pieces (a body as it streams).
    public func begin() -> RunningDigest {
        RunningDigest(key: key)
    }

    public var description: String {
        keyFingerprint.map { "\(algorithm.rawValue) under key \($0)" } ?? algorithm.rawValue
    }

    /// The identity of this function's key object: two functions of one
    /// key object are the same function (`==`), so a caller that keeps a
    /// function's digests may compare this word first. Equal functions
    /// made from the same key bytes twice have two identities.
    public var keyIdentity: ObjectIdentifier { ObjectIdentifier(key) }

    public static func == (a: DigestFunction, b: DigestFunction) -> Bool {
        // One key object is one function (its algorithm and fingerprint were made with it): the usual
        // case, a recording's function compared with itself, compares no fingerprint `String`.
        a.key === b.key || a.algorithm == b.algorithm && a.keyFingerprint == b.keyFingerprint
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(algorithm)
        hasher.combine(keyFingerprint)
    }

    /// Owns the precomputed states (`intact_digest_key`), at a stable address
    /// for the C functions, and the digest of no bytes under them, taken
    /// once: an empty body (most requests') or field value costs a copy, not
    /// two compressions. `@unchecked Sendable`: written only in `init`,
    /// then only read (copied from) by any thread.
    final class Key: @unchecked Sendable {
        let state: UnsafeMutablePointer<intact_digest_key>
        /// `byteCount` bytes: the digest of no bytes under `state`.
        private let digestOfNothing: UnsafeMutablePointer<UInt8>
        /// The function's `algorithm` and `keyFingerprint`.
        let algorithm: Algorithm
        let fingerprint: String?

        init(algorithm: Algorithm, fingerprint: String?, hmac key: [UInt8]?) {
            self.algorithm = algorithm
            self.fingerprint = fingerprint
            let state = UnsafeMutablePointer<intact_digest_key>.allocate(capacity: 1)
            if let key {
                key.withUnsafeBufferPointer { intact_digest_key_init_hmac(state, $0.baseAddress, $0.count) }
            } else {
                intact_digest_key_init_plain(state)
            }
            let digestOfNothing = UnsafeMutablePointer<UInt8>.allocate(capacity: DigestFunction.byteCount)
            intact_digest_oneshot(state, nil, 0, digestOfNothing)
            self.state = state
            self.digestOfNothing = digestOfNothing
        }

        /// Stores the digest of no bytes at `out` (`byteCount` bytes).
        func copyDigestOfNothing(to out: UnsafeMutableRawPointer) {
            out.copyMemory(from: digestOfNothing, byteCount: DigestFunction.byteCount)
        }

        deinit {
            OPENSSL_cleanse(state, MemoryLayout<intact_digest_key>.size)
            OPENSSL_cleanse(digestOfNothing, DigestFunction.byteCount)
            state.deallocate()
            digestOfNothing.deallocate()
        }
    }
}

/// A digest of one `DigestFunction` taken in pieces, as a body streams.
///
/// Copying a value copies the running state (copy-on-write), so a running
/// digest can be adopted by another message and go on there. The state is
/// allocated with the first bytes fed (a body that stays empty, as most
/// requests' do, allocates nothing: its digest is the key's digest of no
/// bytes, taken once);
/// `update` and `finish(into:)` allocate nothing else, and finishing a state
/// shared with another message finishes a copy taken on the stack.
/// `finish` is called once.
public struct RunningDigest: @unchecked Sendable {
    // `@unchecked`: `Storage` (a `ManagedBuffer`, which cannot be declared
    // Sendable) is only mutated through this value's copy-on-write.
    private var storage: Storage?
    private let key: DigestFunction.Key

    fileprivate init(key: DigestFunction.Key) {
        self.key = key
    }

    /// Feeds bytes into the digest.
    public mutating func update<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        guard !bytes.isEmpty else { return }
        if storage == nil {
            storage = Storage.make(key: key)
        } else if !isKnownUniquelyReferenced(&storage) {
            storage = storage!.copy()
        }
        let storage = self.storage!
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            storage.update(UnsafeRawBufferPointer(buffer))
        }
        if done == nil {
            Array(bytes).withUnsafeBytes { storage.update($0) }
        }
    }

    /// The 32-byte digest. The value must not be updated afterwards.
    public mutating func finish() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: DigestFunction.byteCount) { out, count in
            finish(into: UnsafeMutableRawPointer(out.baseAddress!))
            count = DigestFunction.byteCount
        }
    }

    /// The 32-byte digest, stored at `out`. The value must not be updated afterwards.
    public mutating func finish(into out: UnsafeMutableRawPointer) {
        let digest = out.assumingMemoryBound(to: UInt8.self)
        guard storage != nil else { return key.copyDigestOfNothing(to: out) }
        if isKnownUniquelyReferenced(&storage) {
            storage!.finish(into: digest)
        } else {
            storage!.finishCopy(into: digest)
        }
    }

    /// The running `SHA256_CTX`, tail-allocated behind the key it started
    /// from, in one allocation.
    private final class Storage: ManagedBuffer<DigestFunction.Key, SHA256_CTX> {
        static func make(key: DigestFunction.Key) -> Storage {
            let buffer = unsafeDowncast(Storage.create(minimumCapacity: 1) { _ in key }, to: Storage.self)
            buffer.withUnsafeMutablePointers { key, running in intact_digest_begin(key.pointee.state, running) }
            return buffer
        }

        func copy() -> Storage {
            let buffer = unsafeDowncast(Storage.create(minimumCapacity: 1) { _ in header }, to: Storage.self)
            withUnsafeMutablePointerToElements { source in
                buffer.withUnsafeMutablePointerToElements { $0.initialize(to: source.pointee) }
            }
            return buffer
        }

        func update(_ bytes: UnsafeRawBufferPointer) {
            guard bytes.count > 0 else { return }
            withUnsafeMutablePointerToElements { intact_digest_update($0, bytes.baseAddress, bytes.count) }
        }

        func finish(into out: UnsafeMutablePointer<UInt8>) {
            withUnsafeMutablePointers { key, running in
                intact_digest_finish(key.pointee.state, running, out)
            }
        }

        /// Finishes a copy of the state, leaving this one as it is (another
        /// message shares it).
        func finishCopy(into out: UnsafeMutablePointer<UInt8>) {
            withUnsafeMutablePointers { key, running in
                var copy = running.pointee
                intact_digest_finish(key.pointee.state, &copy, out)
            }
        }
    }
}
