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

    /// One server certificate naming every one of `names` (host names or
    /// IP addresses, duplicates dropped), its subject CN the first: for a
    /// server reached by several names (the mock server's external host and
    /// its listen address). Not cached; throws `.invalidName` as `leaf(for:)`.
    public func leaf(forNames names: [String]) throws -> TLSIdentity {
        var hosts: [CertificateHost] = []
        for name in names {
            let host = try CertificateHost(name)
            if !hosts.contains(where: { $0.description == host.description }) { hosts.append(host) }
        }
        guard let first = hosts.first else { throw CertificateError.invalidName("", reason: "no name given") }
        return hosts.count == 1 ? try leaf(for: first.description) : try mintLeaf(for: first, also: hosts.dropFirst())
    }

    private func mintLeaf(for host: CertificateHost, also others: ArraySlice<CertificateHost> = []) throws -> TLSIdentity {
        let alternativeName = ([host] + others).map { host in
            switch host {
            case let .dnsName(name): return "DNS:" + name
            case let .ipAddress(address): return "IP:" + address
            }
        }.joined(separator: ",")
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
