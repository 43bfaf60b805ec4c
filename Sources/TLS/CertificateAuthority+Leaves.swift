internal import COpenSSL

/// Server certificates minted on demand, one per host, cached.
extension CertificateAuthority {
    /// Validity of a minted server certificate: 397 days, the longest that
    /// browsers and mobile platforms accept (counted from the backdated `notBefore`).
    public static let leafValidityDays = 397

    /// The server certificate for `name` (a host name or an IPv4/IPv6
    /// address): subject CN=name, a subjectAltName of type DNS or IP
    /// accordingly, serverAuth, signed by the CA, certifying the shared leaf key.
    ///
    /// Returns the cached identity when `name` (in canonical form:
    /// lowercase, no trailing dot) was minted before and not evicted. Safe
    /// to call from any thread; does no I/O. A miss costs one ECDSA
    /// signature; two threads missing on one name at once may both sign, and
    /// both get the identity that reached the cache first.
    /// Throws `.invalidName` for a name that is neither a host name nor an IP address.
    public func leaf(for name: String) throws -> TLSIdentity {
        let host = try CertificateHost(name)
        if let cached = leafCache.withLock({ $0.value(for: host) }) {
            return cached
        }
        let minted = try mintLeaf(for: host)
        return leafCache.withLock { cache in
            if let raced = cache.value(for: host) { return raced }
            cache.insert(minted, for: host)
            return minted
        }
    }

    /// How many server certificates are cached now.
    public var cachedLeafCount: Int {
        leafCache.withLock { $0.count }
    }

    /// Most server certificates kept; beyond it the least recently used is dropped.
    public var leafCacheCapacity: Int {
        leafCache.withLock { $0.capacity }
    }

    private func mintLeaf(for host: CertificateHost) throws -> TLSIdentity {
        let alternativeName: String
        switch host {
        case let .dnsName(name): alternativeName = "DNS:" + name
        case let .ipAddress(address): alternativeName = "IP:" + address
        }
        // A common name holds at most 64 characters. A longer host name gets
        // an empty subject, and RFC 5280 then requires the subjectAltName to be critical.
        let fitsCommonName = host.description.utf8.count <= 64
        let builder = X509Builder(
            subject: fitsCommonName ? [("CN", host.description)] : [],
            extensions: [
                (NID_basic_constraints, "critical,CA:FALSE"),
                (NID_key_usage, "critical,digitalSignature"),
                (NID_ext_key_usage, "serverAuth"),
                (NID_subject_alt_name, (fitsCommonName ? "" : "critical,") + alternativeName),
                (NID_subject_key_identifier, "hash"),
                (NID_authority_key_identifier, "keyid:always"),
            ],
            validityDays: Self.leafValidityDays)
        let certificate = try builder.sign(publicKey: leafKey.pointer, issuer: authority.certificate.pointer,
                                           issuerKey: authority.privateKey.pointer)
        return TLSIdentity(certificate: certificate, chain: [], key: leafKey.retained())
    }
}
