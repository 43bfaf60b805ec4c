import Foundation
import Synchronization
import TLS

/// The TLS contexts of one proxy run: a server context per certificate name
/// and set of TLS changes (each presenting a leaf the CA minted for that
/// name, or the throwaway CA for an untrusted one; demanding a client
/// certificate when a fault says so), and one client context for every upstream.
///
/// Downstream contexts select `h2`, `http/1.1` or `http/1.0` by ALPN and
/// refuse a client that offers only protocols the proxy does not speak (the
/// `no_application_protocol` alert); a client that offers no ALPN at all
/// gets HTTP/1.1. Upstream, the proxy offers `h2` and `http/1.1`. Both sides write the key log when one is configured.
///
/// `Sendable`: the cache is behind a mutex; contexts themselves are Sendable.
final class TLSContexts: Sendable {
    /// Server contexts kept; beyond it the oldest is dropped (connections keep theirs alive).
    static let serverCacheCapacity = 256
    /// What the proxy offers upstream, in the order it prefers.
    static let alpn = ["h2", "http/1.1"]
    /// What the proxy accepts from clients, in the order it prefers: `http/1.0`
    /// too (`curl -0`), spoken by the HTTP/1.x engine with HTTP/1.0 framing.
    static let downstreamALPN = alpn + ["http/1.0"]

    let authority: CertificateAuthority
    let keyLog: TLSKeyLogSetting
    /// The context every upstream connection uses.
    let upstream: TLSContext
    /// Stands in while a client's ClientHello is read (the channel needs a
    /// context up front); the handshake always goes on with `server(for:)`.
    let placeholder: TLSContext
    /// Mints the certificates no client trusts (`presentsUntrustedCertificate`); nil when no add-on asks for them.
    let untrustedAuthority: CertificateAuthority?

    /// What a server context is made for.
    private struct ServerKey: Hashable {
        let name: String
        let changes: DownstreamTLSChanges
    }

    private let servers = Mutex<(contexts: [ServerKey: TLSContext], order: [ServerKey])>(([:], []))

    /// Builds the upstream context. Blocks on disk I/O (trust roots, key log):
    /// call off the event loops.
    init(authority: CertificateAuthority, keyLog: TLSKeyLogSetting,
         verification: ProxyConfiguration.UpstreamVerification, clientIdentity: TLSIdentity?,
         untrustedAuthority: CertificateAuthority? = nil) throws(TLSError) {
        self.authority = authority
        self.keyLog = keyLog
        self.untrustedAuthority = untrustedAuthority
        let check: TLSServerVerification
        switch verification {
        case .systemStore: check = .verify(.systemStore)
        case .caFile(let path): check = .verify(.caFile(path))
        case .systemStoreAndCAFile(let path): check = .verify(.systemStoreAndCAFile(path))
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

    /// A CA made for this run only, known to no client: its files go to a
    /// private temporary directory that is removed at once (the CA lives on
    /// in memory). Blocks on key generation and disk I/O: call off the loops.
    static func throwawayAuthority() throws -> CertificateAuthority {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("intact-untrusted-ca-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        return try CertificateAuthority.create(in: directory, leafCacheCapacity: 16)
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
    /// address) with `changes`, made on first use. Cheap after the first
    /// call per name and changes: minting is one ECDSA signature with the
    /// CA's shared leaf key, and the client-certificate roots are in memory
    /// (the proxy's CA, or PEM an add-on read when it was made).
    func server(for name: String, changes: DownstreamTLSChanges = DownstreamTLSChanges()) throws -> TLSContext {
        let key = ServerKey(name: name, changes: changes)
        if let cached = servers.withLock({ $0.contexts[key] }) { return cached }
        let issuer: CertificateAuthority
        if changes.presentsUntrustedCertificate {
            guard let untrustedAuthority else {
                throw TLSError(kind: .invalidIdentity,
                               explanation: "an untrusted certificate was asked for, but no add-on declared it at start")
            }
            issuer = untrustedAuthority
        } else {
            issuer = authority
        }
        var configuration = TLSServerConfiguration(identity: try issuer.leaf(for: name))
        configuration.alpnPreference = TLSContexts.downstreamALPN
        configuration.alpnMismatch = .fail
        configuration.keyLog = keyLog
        switch changes.requiredClientCertificate {
        case nil: break
        case .proxyAuthority?: configuration.clientCertificate = .require(trustedBy: .caPEM(Array(authority.certificatePEM.utf8)))
        case .roots(let roots)?: configuration.clientCertificate = .require(trustedBy: roots)
        }
        let context = try TLSContext(server: configuration)
        return servers.withLock { cache in
            if let raced = cache.contexts[key] { return raced }
            cache.contexts[key] = context
            cache.order.append(key)
            if cache.order.count > TLSContexts.serverCacheCapacity {
                cache.contexts[cache.order.removeFirst()] = nil
            }
            return context
        }
    }
}
