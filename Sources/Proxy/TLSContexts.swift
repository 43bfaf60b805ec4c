import Synchronization
import TLS

/// The TLS contexts of one proxy run: a server context per certificate name
/// (each presenting a leaf the CA minted for that name), and one client
/// context for every upstream.
///
/// Downstream contexts select `h2` or `http/1.1` by ALPN and refuse a
/// client that offers only protocols the proxy does not speak (the
/// `no_application_protocol` alert); a client that offers no ALPN at all
/// gets HTTP/1.1. Both sides write the key log when one is configured.
///
/// `Sendable`: the cache is behind a mutex; contexts themselves are Sendable.
final class TLSContexts: Sendable {
    /// Server contexts kept; beyond it the oldest is dropped (connections keep theirs alive).
    static let serverCacheCapacity = 256
    /// What the proxy speaks, in the order it prefers.
    static let alpn = ["h2", "http/1.1"]

    let authority: CertificateAuthority
    let keyLog: TLSKeyLogSetting
    /// The context every upstream connection uses.
    let upstream: TLSContext
    /// Stands in while a client's ClientHello is read (the channel needs a
    /// context up front); the handshake always goes on with `server(for:)`.
    let placeholder: TLSContext
    private let servers = Mutex<(contexts: [String: TLSContext], order: [String])>(([:], []))

    /// Builds the upstream context. Blocks on disk I/O (trust roots, key log):
    /// call off the event loops.
    init(authority: CertificateAuthority, keyLog: TLSKeyLogSetting,
         verification: ProxyConfiguration.UpstreamVerification, clientIdentity: TLSIdentity?) throws(TLSError) {
        self.authority = authority
        self.keyLog = keyLog
        let check: TLSServerVerification
        switch verification {
        case .systemStore: check = .verify(.systemStore)
        case .caFile(let path): check = .verify(.caFile(path))
        case .insecure: check = .insecureNoVerification
        }
        var configuration = TLSClientConfiguration(verification: check, identity: clientIdentity)
        configuration.alpnOffer = TLSContexts.alpn
        configuration.keyLog = keyLog
        upstream = try TLSContext(client: configuration)
        var stand = TLSServerConfiguration(identity: try TLSContexts.leaf(authority, "localhost"))
        stand.keyLog = .disabled
        placeholder = try TLSContext(server: stand)
    }

    /// The CA's leaf for `name`, its minting error as a TLS configuration error.
    private static func leaf(_ authority: CertificateAuthority, _ name: String) throws(TLSError) -> TLSIdentity {
        do {
            return try authority.leaf(for: name)
        } catch {
            throw TLSError(kind: .invalidIdentity, explanation: "cannot mint a certificate for \(name): \(error)")
        }
    }

    /// The server context presenting a leaf for `name` (a host name or an IP
    /// address), minted on first use. Cheap after the first call per name:
    /// minting is one ECDSA signature with the CA's shared leaf key.
    func server(for name: String) throws -> TLSContext {
        if let cached = servers.withLock({ $0.contexts[name] }) { return cached }
        var configuration = TLSServerConfiguration(identity: try authority.leaf(for: name))
        configuration.alpnPreference = TLSContexts.alpn
        configuration.alpnMismatch = .fail
        configuration.keyLog = keyLog
        let context = try TLSContext(server: configuration)
        return servers.withLock { cache in
            if let raced = cache.contexts[name] { return raced }
            cache.contexts[name] = context
            cache.order.append(name)
            if cache.order.count > TLSContexts.serverCacheCapacity {
                cache.contexts[cache.order.removeFirst()] = nil
            }
            return context
        }
    }
}
