import Evidence
import TLS

/// What add-ons decide about a client connection when it is accepted: how
/// the proxy's TLS handshake with the client differs from the usual one, and
/// the faults that decision applied (written into every record of the
/// connection, the failed handshake's included).
public struct ConnectionDirectives: Sendable, Hashable {
    public var tls: DownstreamTLSChanges
    public var faults: [ExchangeRecord.RecordedFault]

    public init(tls: DownstreamTLSChanges = DownstreamTLSChanges(), faults: [ExchangeRecord.RecordedFault] = []) {
        self.tls = tls
        self.faults = faults
    }

    /// Both add-ons' directives: the later one's TLS changes win where both set one.
    func merged(with other: ConnectionDirectives) -> ConnectionDirectives {
        ConnectionDirectives(
            tls: DownstreamTLSChanges(requiredClientCertificate: other.tls.requiredClientCertificate ?? tls.requiredClientCertificate,
                                      presentsUntrustedCertificate: tls.presentsUntrustedCertificate || other.tls.presentsUntrustedCertificate),
            faults: faults + other.faults)
    }
}

/// Changes to the TLS server side the proxy shows one client (a gateway's
/// behaviour, injected on purpose). The default changes nothing.
public struct DownstreamTLSChanges: Sendable, Hashable {
    /// Which CA a client certificate must lead to.
    public enum ClientCertificateIssuer: Sendable, Hashable {
        /// The proxy's own CA, the one that mints its certificates.
        case proxyAuthority
        /// These roots (for example a PEM file's certificates, read when the add-on was made).
        case roots(TLSTrustRoots)
    }

    /// Demand a client certificate from this issuer; nil asks for none.
    public var requiredClientCertificate: ClientCertificateIssuer?
    /// Present a certificate minted by a throwaway CA no client trusts,
    /// instead of one from the proxy's CA.
    public var presentsUntrustedCertificate: Bool

    public init(requiredClientCertificate: ClientCertificateIssuer? = nil, presentsUntrustedCertificate: Bool = false) {
        self.requiredClientCertificate = requiredClientCertificate
        self.presentsUntrustedCertificate = presentsUntrustedCertificate
    }

    /// True when nothing changes.
    public var isStandard: Bool { requiredClientCertificate == nil && !presentsUntrustedCertificate }
}
