internal import COpenSSL

/// The outcome of one `TLSEngine.handshake()` step.
public enum TLSHandshakeResult: Sendable, Hashable {
    /// The engine needs more bytes from the peer (send `takeOutbound()` first).
    case incomplete
    /// The handshake is done; `negotiated` is set.
    case complete
    /// The handshake failed; send `takeOutbound()` (it may hold the alert), then close.
    case failed(TLSError)
}

/// One TLS connection as a sans-io engine: one `SSL` over one `EngineBIO`,
/// which reads the ciphertext fed and collects the ciphertext to send.
/// Ciphertext from the peer goes in with `feed`, ciphertext for the peer comes
/// out of `takeOutbound`; plaintext goes through `writePlaintext` and
/// `readPlaintext`. No sockets, no threads, no timers.
///
/// Usage: after every call, send whatever `takeOutbound()` returns. Drive
/// `handshake()` until `.complete`, then read and write plaintext.
///
/// Invariants: not thread-safe, used from one serial queue (the connection's
/// loop). The `SSL` (and through it the BIO) is owned and freed in `deinit`.
/// The SSL's app data points at this engine, unretained; OpenSSL only calls
/// back during this engine's own calls, while it is alive.
public final class TLSEngine {
    /// Where the connection is in its life.
    public enum State: Sendable, Hashable {
        case handshaking
        /// Application data flows both ways.
        case established
        /// We sent close_notify; the peer may still send data, then its own close_notify.
        case closeNotifySent
        /// The peer sent close_notify; we may still write, then call `shutdown()`.
        case closeNotifyReceived
        /// Both close_notify alerts crossed.
        case closed
        /// A fatal error ended the connection; every later call reports it again.
        case failed(TLSError)
    }

    public let context: TLSContext
    /// Client: the host name or IP address asked for (SNI and certificate check). Server: `nil`.
    public let serverName: String?
    public private(set) var state: State = .handshaking
    /// What the handshake settled; set when `handshake()` returns `.complete`.
    public private(set) var negotiated: TLSConnectionInfo?

    /// The `SSL *`, owned.
    let ssl: OpaquePointer
    /// Ciphertext from the peer, fed and not yet read by OpenSSL from
    /// `inboundStart` on (the `EngineBIO` reads it). Holds only what a
    /// lending call (`withLentInbound`) left unread, or what `feed` gave.
    private var inboundCiphertext: [UInt8] = []
    /// Where the bytes OpenSSL has not read yet begin in `inboundCiphertext`.
    private var inboundStart = 0
    /// Ciphertext lent by the caller for the duration of `withLentInbound`
    /// only, read from `lentStart` on after `inboundCiphertext`; nil outside.
    private var lentInbound: UnsafeRawBufferPointer?
    /// Where the bytes OpenSSL has not read yet begin in `lentInbound`.
    private var lentStart = 0
    /// Ciphertext OpenSSL wrote for the peer (through the `EngineBIO`), until `takeOutbound`.
    var outboundCiphertext: [UInt8] = []
    /// What callbacks saw during the handshake; read to explain failures and fill `negotiated`.
    var observations = HandshakeObservations()
    /// Client: the SNI actually sent (`nil` for an IP address).
    let sentServerName: String?

    /// Creates an engine in the context's role. For a client, `serverName` is the host
    /// the connection is for: a DNS name is sent as SNI and checked against the certificate;
    /// an IP address is not sent (SNI forbids it) but is checked; `nil` skips the host check.
    /// Servers ignore `serverName`: they learn it from the ClientHello.
    public init(context: TLSContext, serverName: String? = nil) throws(TLSError) {
        let made = OpenSSLErrorQueue.run { () -> (ssl: OpaquePointer, bio: OpaquePointer)? in
            guard let ssl = SSL_new(context.pointer) else { return nil }
            guard let bio = EngineBIO.make() else { SSL_free(ssl); return nil }
            // One BIO both ways: SSL_set_bio takes the one reference for both.
            SSL_set_bio(ssl, bio, bio)
            return (ssl, bio)
        }
        guard let handles = made.result else {
            throw TLSError(kind: .configuration, explanation: "OpenSSL could not create a TLS connection",
                           openSSLReason: OpenSSLErrorQueue.summary(made.errors))
        }
        self.context = context
        self.ssl = handles.ssl
        switch context.role {
        case .server:
            self.serverName = nil
            self.sentServerName = nil
        case .client:
            self.serverName = serverName
            self.sentServerName = serverName.flatMap { name in
                if case .hostName = HostNameSyntax.check(Array(name.utf8)) { name } else { nil }
            }
        }
        SSL_set_ex_data(ssl, 0, Unmanaged.passUnretained(self).toOpaque())
        EngineBIO.attach(handles.bio, to: self)
        switch context.role {
        case .server: SSL_set_accept_state(ssl)
        case .client:
            SSL_set_connect_state(ssl)
            try expectServer(named: serverName)
        }
    }

    deinit {
        SSL_free(ssl)
    }

    /// Sets SNI and the name the server certificate must carry.
    private func expectServer(named name: String?) throws(TLSError) {
        guard let name else { return }
        let param = SSL_get0_param(ssl)
        let outcome: (result: Bool, errors: [OpenSSLErrorEntry])
        switch HostNameSyntax.check(Array(name.utf8)) {
        case .hostName:
            outcome = OpenSSLErrorQueue.run {
                intact_SSL_set_tlsext_host_name(ssl, name) == 1 && X509_VERIFY_PARAM_set1_host(param, name, 0) == 1
            }
        case .ipAddress:
            outcome = OpenSSLErrorQueue.run { X509_VERIFY_PARAM_set1_ip_asc(param, name) == 1 }
        case .invalid(let reason):
            throw TLSError(kind: .invalidServerName, explanation: "cannot connect to \"\(name)\": \(reason)")
        }
        guard outcome.result else {
            throw TLSError(kind: .invalidServerName, explanation: "OpenSSL refused the server name \"\(name)\"",
                           openSSLReason: OpenSSLErrorQueue.summary(outcome.errors))
        }
    }

    /// Recovers the engine from an `SSL *` inside an OpenSSL callback.
    static func from(_ ssl: OpaquePointer?) -> TLSEngine? {
        guard let ssl, let raw = SSL_get_ex_data(ssl, 0) else { return nil }
        return Unmanaged<TLSEngine>.fromOpaque(raw).takeUnretainedValue()
    }

    // MARK: Bytes in and out

    /// Hands the engine ciphertext received from the peer. Bytes are buffered until
    /// the next `handshake()` or `readPlaintext()`; feeding never fails.
    public func feed(_ ciphertext: [UInt8]) {
        ciphertext.withUnsafeBytes { feed($0) }
    }

    /// Hands the engine ciphertext straight from a receive buffer.
    public func feed(_ ciphertext: UnsafeRawBufferPointer) {
        precondition(lentInbound == nil, "TLSEngine.feed inside withLentInbound would overtake the lent bytes")
        guard !ciphertext.isEmpty else { return }
        // What OpenSSL read goes first (at most the start of a record stays).
        if inboundStart > 0 {
            inboundCiphertext.removeFirst(inboundStart)
            inboundStart = 0
        }
        ciphertext.withMemoryRebound(to: UInt8.self) { bytes in
            // Sized to the bytes when empty (no growth slack kept).
            if inboundCiphertext.isEmpty { inboundCiphertext = Array(bytes) } else { inboundCiphertext.append(contentsOf: bytes) }
        }
    }

    /// Runs `body` (calls such as `handshake()` and `readPlaintext()`) with
    /// `ciphertext` fed without copying it: OpenSSL reads it straight from the
    /// caller's buffer (a socket's read buffer), after anything fed before.
    /// Whatever OpenSSL left unread (rarely more than nothing: it takes the
    /// start of an incomplete record into its own buffer) is copied into the
    /// engine before this returns, so `ciphertext` need only be valid during
    /// the call. Not nested.
    public func withLentInbound<Result>(_ ciphertext: UnsafeRawBufferPointer, _ body: () -> Result) -> Result {
        precondition(lentInbound == nil, "TLSEngine.withLentInbound nested")
        guard !ciphertext.isEmpty else { return body() }
        lentInbound = ciphertext
        lentStart = 0
        defer {
            let unread = UnsafeRawBufferPointer(rebasing: ciphertext[lentStart...])
            lentInbound = nil
            lentStart = 0
            feed(unread)
        }
        return body()
    }

    /// Ciphertext fed (or lent) and not yet read by OpenSSL.
    var inboundPendingCount: Int {
        inboundCiphertext.count - inboundStart + (lentInbound.map { $0.count - lentStart } ?? 0)
    }

    /// Bytes the engine holds on to of what was fed and lent, unread (tests read it).
    var keptInboundCount: Int { inboundCiphertext.count - inboundStart }

    /// Copies the next `count` pending inbound bytes to `destination` and
    /// counts them read: the bytes fed first, then the lent ones. Called by
    /// the `EngineBIO`; `count` ≤ `inboundPendingCount`.
    func consumeInbound(_ count: Int, into destination: UnsafeMutableRawPointer) {
        let fromOwned = min(count, inboundCiphertext.count - inboundStart)
        if fromOwned > 0 {
            inboundCiphertext.withUnsafeBytes { source in
                destination.copyMemory(from: source.baseAddress! + inboundStart, byteCount: fromOwned)
            }
            inboundStart += fromOwned
        }
        let fromLent = count - fromOwned
        guard fromLent > 0, let lent = lentInbound else { return }
        (destination + fromOwned).copyMemory(from: lent.baseAddress! + lentStart, byteCount: fromLent)
        lentStart += fromLent
    }

    /// Whether ciphertext waits to be sent.
    public var hasOutbound: Bool {
        !outboundCiphertext.isEmpty
    }

    /// Removes and returns the ciphertext to send to the peer (empty when there is none):
    /// the array OpenSSL wrote into, copied only when it has much unused room.
    /// Compacts the inbound buffer too: every handshake step ends here, with its flight read.
    public func takeOutbound() -> [UInt8] {
        var bytes: [UInt8] = []
        swap(&bytes, &outboundCiphertext)
        compactInbound()
        guard bytes.capacity - bytes.count > TLSEngine.plaintextSlack else { return bytes }
        return [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, count in
            count = bytes.withUnsafeBufferPointer { buffer.initialize(fromContentsOf: $0) }
        }
    }

    /// Gives the inbound buffer's storage back once OpenSSL read all of it,
    /// so an idle connection keeps nothing of its handshake, its last
    /// request or its largest burst. A buffer that still holds bytes (the
    /// start of a record) keeps them.
    private func compactInbound() {
        guard inboundStart == inboundCiphertext.count, inboundStart > 0 else { return }
        inboundStart = 0
        inboundCiphertext = []
    }

    /// The bytes both ciphertext buffers hold on to, used or not (tests read it).
    var memoryBufferCapacity: Int {
        inboundCiphertext.capacity + outboundCiphertext.capacity
    }

    // MARK: Handshake

    /// Advances the handshake with the bytes fed so far. After `.complete`, call
    /// `readPlaintext()` even without new bytes: the peer's last flight may have
    /// carried application data with it.
    public func handshake() -> TLSHandshakeResult {
        switch state {
        case .handshaking:
            break
        case .failed(let error):
            return .failed(error)
        case .established, .closeNotifySent, .closeNotifyReceived, .closed:
            return .complete
        }
        let step = OpenSSLErrorQueue.run { () -> Int32 in
            let result = SSL_do_handshake(ssl)
            return result == 1 ? SSL_ERROR_NONE : SSL_get_error(ssl, result)
        }
        switch step.result {
        case SSL_ERROR_NONE:
            state = .established
            negotiated = connectionInfo()
            return .complete
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return .incomplete
        default:
            let error = failure(sslError: step.result, errors: step.errors)
            state = .failed(error)
            return .failed(error)
        }
    }

    // MARK: Application data

    /// Encrypts plaintext for the peer; the records appear in `takeOutbound()`.
    /// Allowed once established and until we send close_notify.
    public func writePlaintext(_ plaintext: [UInt8]) throws(TLSError) {
        switch state {
        case .established, .closeNotifyReceived:
            break
        case .failed(let error):
            throw error
        case .handshaking, .closeNotifySent, .closed:
            throw TLSError(kind: .notEstablished, explanation: "cannot send application data while \(state.phrase)")
        }
        guard !plaintext.isEmpty else { return }
        reserveOutbound(forPlaintext: plaintext.count)
        let step = plaintext.withUnsafeBytes { buffer in
            OpenSSLErrorQueue.run({ () -> Int32 in
                var written = 0
                let result = SSL_write_ex(ssl, buffer.baseAddress, buffer.count, &written)
                return result == 1 ? SSL_ERROR_NONE : SSL_get_error(ssl, result)
            }, drainingAfter: { $0 != SSL_ERROR_NONE })
        }
        guard step.result == SSL_ERROR_NONE else {
            let error = failure(sslError: step.result, errors: step.errors)
            state = .failed(error)
            throw error
        }
    }

    /// Decrypts every complete record fed so far and returns the plaintext (empty when
    /// no record is complete). A close_notify from the peer moves `state` to
    /// `.closeNotifyReceived` (or `.closed`). Processing may produce outbound bytes
    /// (TLS 1.3 key updates): send `takeOutbound()` afterwards.
    ///
    /// Throws when the peer broke the connection, for example with a fatal alert.
    /// Plaintext decrypted before the failure is returned first; the next call throws.
    public func readPlaintext() throws(TLSError) -> [UInt8] {
        switch state {
        case .established, .closeNotifySent:
            break
        case .failed(let error):
            throw error
        case .closeNotifyReceived, .closed:
            return []
        case .handshaking:
            throw TLSError(kind: .notEstablished, explanation: "cannot read application data while \(state.phrase)")
        }
        guard inboundPendingCount > 0 || SSL_has_pending(ssl) == 1 else { return [] }
        var plaintext: [UInt8] = []
        var stop = DecryptStop(code: SSL_ERROR_NONE, errors: [])
        // Plaintext never exceeds the ciphertext pending plus what OpenSSL already holds,
        // plus one record whose start it has already taken from the BIO.
        let room = inboundPendingCount + Int(SSL_pending(ssl)) + 16 * 1024 + 256
        if room >= TLSEngine.directDecryptRoom {
            // A burst (a body): decrypted straight into the array handed out,
            // with no copy. Its spare room (at most about one record) lives
            // only as long as the consumer holds the chunk.
            plaintext = [UInt8](unsafeUninitializedCapacity: room) { buffer, count in
                var decrypted = 0
                stop = decrypt(into: UnsafeMutableRawBufferPointer(buffer), count: &decrypted)
                count = decrypted
            }
            if stop.code == SSL_ERROR_NONE {
                // Full before OpenSSL ran dry (not expected: `room` bounds it): go on through the scratch.
                appendDecrypted(to: &plaintext, stop: &stop, room: 16 * 1024 + 256)
            }
        } else {
            appendDecrypted(to: &plaintext, stop: &stop, room: room)
        }
        let errors = stop.errors
        switch stop.code {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            break
        case SSL_ERROR_ZERO_RETURN:
            state = state == .closeNotifySent ? .closed : .closeNotifyReceived
        default:
            let error = failure(sslError: stop.code, errors: errors)
            state = .failed(error)
            if plaintext.isEmpty { throw error }
        }
        // Reading drains only the inbound buffer; what it wrote leaves through `takeOutbound`.
        compactInbound()
        return plaintext
    }

    /// Unused room an outbound ciphertext array may keep before `takeOutbound` copies it to its size.
    static let plaintextSlack = 4 * 1024

    /// From this much room up, `readPlaintext` decrypts into the array it
    /// returns rather than into the shared scratch (whose bytes it would copy).
    static let directDecryptRoom = 64 * 1024

    /// Why a run of `SSL_read_ex` calls stopped: `SSL_ERROR_NONE` while the
    /// buffer merely filled up, else OpenSSL's code and its error queue.
    struct DecryptStop {
        var code: Int32
        var errors: [OpenSSLErrorEntry]
    }

    /// Decrypts into `buffer` from `count` on until OpenSSL stops or the
    /// buffer is full; `count` ends at the bytes of `buffer` filled.
    ///
    /// Once every ciphertext byte was taken (none left in the BIO's buffers,
    /// none held inside OpenSSL: it reads no further ahead than the record it
    /// decrypts) another `SSL_read_ex` could only say `SSL_ERROR_WANT_READ`,
    /// so that is returned without the call: a record layer pass and an
    /// error-queue check per read saved (two per proxied request).
    private func decrypt(into buffer: UnsafeMutableRawBufferPointer, count: inout Int) -> DecryptStop {
        while count < buffer.count {
            if count > 0, inboundPendingCount == 0, SSL_has_pending(ssl) == 0 {
                return DecryptStop(code: SSL_ERROR_WANT_READ, errors: [])
            }
            let step = OpenSSLErrorQueue.run({ () -> (code: Int32, read: Int) in
                var read = 0
                let result = SSL_read_ex(ssl, buffer.baseAddress! + count, buffer.count - count, &read)
                return (result == 1 ? SSL_ERROR_NONE : SSL_get_error(ssl, result), read)
            }, drainingAfter: { $0.code != SSL_ERROR_NONE })
            guard step.result.code == SSL_ERROR_NONE else { return DecryptStop(code: step.result.code, errors: step.errors) }
            count += step.result.read
        }
        return DecryptStop(code: SSL_ERROR_NONE, errors: [])
    }

    /// Decrypts through a buffer of `PlaintextScratch` of `room` bytes and
    /// appends what came out to `plaintext`, until OpenSSL stops (`stop`).
    /// Copied out at its size: a small message (a request head) keeps no
    /// spare room alive for as long as a parser holds it.
    private func appendDecrypted(to plaintext: inout [UInt8], stop: inout DecryptStop, room: Int) {
        PlaintextScratch.shared.withBuffer(capacity: room) { scratch in
            repeat {
                var count = 0
                stop = decrypt(into: scratch, count: &count)
                if plaintext.isEmpty {
                    plaintext = Array(UnsafeRawBufferPointer(rebasing: scratch[..<count]))
                } else {
                    plaintext.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[..<count]))
                }
            } while stop.code == SSL_ERROR_NONE
        }
    }

    /// Most bytes a record adds to its plaintext, for sizing the outbound
    /// buffer: TLS 1.3 adds 22 (header, content type, tag), TLS 1.2 with
    /// AES-GCM 29. A cipher that adds more (CBC padding) makes the buffer grow.
    static let recordOverhead = 32

    /// Gives `outboundCiphertext` room for the records `count` plaintext
    /// bytes become, so OpenSSL's writes through the `EngineBIO` append
    /// without regrowing (each regrowth copied everything written so far).
    private func reserveOutbound(forPlaintext count: Int) {
        let records = (count + 16 * 1024 - 1) / (16 * 1024)
        let needed = outboundCiphertext.count + count + records * TLSEngine.recordOverhead
        guard needed > outboundCiphertext.capacity else { return }
        outboundCiphertext.reserveCapacity(needed)
    }

    // MARK: Record buffers

    /// Whether OpenSSL keeps its record buffers (about 17 KiB to read and as
    /// much to write) between records. Every engine starts releasing them
    /// after each record (the context's `SSL_MODE_RELEASE_BUFFERS`), so an
    /// idle connection holds none; a busy one keeps them
    /// (`keepRecordBuffers(true)`) instead of allocating and freeing two per
    /// record exchanged. Turning keeping off frees them at once unless they
    /// hold bytes not yet processed (then OpenSSL frees them once those are
    /// processed). Changes only memory, never bytes.
    public var keepsRecordBuffers: Bool {
        intact_SSL_get_mode(ssl) & Int(SSL_MODE_RELEASE_BUFFERS) == 0
    }

    /// See `keepsRecordBuffers`.
    public func keepRecordBuffers(_ keep: Bool) {
        if keep {
            _ = intact_SSL_clear_mode(ssl, Int(SSL_MODE_RELEASE_BUFFERS))
        } else {
            _ = intact_SSL_set_mode(ssl, Int(SSL_MODE_RELEASE_BUFFERS))
            // 0 when a buffer still holds unprocessed bytes: the mode frees it after them.
            _ = SSL_free_buffers(ssl)
        }
    }

    // MARK: Closing

    /// Sends close_notify (queued in `takeOutbound()`). After the peer's close_notify
    /// this completes the closure; during the handshake or after a failure there is
    /// nothing to say and the engine simply counts as closed (or stays failed).
    public func shutdown() {
        switch state {
        case .established, .closeNotifyReceived:
            let step = OpenSSLErrorQueue.run { () -> (result: Int32, code: Int32) in
                let result = SSL_shutdown(ssl)
                return (result, result >= 0 ? SSL_ERROR_NONE : SSL_get_error(ssl, result))
            }
            switch step.result.result {
            case 1: state = .closed           // the peer's close_notify had already arrived
            case 0: state = .closeNotifySent
            default: state = .failed(failure(sslError: step.result.code, errors: step.errors))
            }
        case .handshaking:
            state = .closed
        case .closeNotifySent, .closed, .failed:
            break
        }
    }
}

extension TLSEngine.State {
    /// "during the handshake", for error explanations.
    var phrase: String {
        switch self {
        case .handshaking: "the handshake is in progress"
        case .established: "established"
        case .closeNotifySent: "closing (close_notify sent)"
        case .closeNotifyReceived: "closing (close_notify received)"
        case .closed: "closed"
        case .failed: "failed"
        }
    }
}
