import TLS

/// Where the mock server's TLS certificate comes from.
public enum ServerCertificateSource: Sendable {
    /// Minted on demand from the development CA in this directory (created
    /// on first use): one certificate per server name the client asks for,
    /// and one for the external host when it sends none (an IP address).
    case developmentCA(directory: String)
    /// Minted from a CA already loaded (the demo shares one with the proxy).
    case authority(CertificateAuthority)
    /// A certificate (with its chain) and its key, PEM files.
    case files(certificate: String, key: String)

    /// What a source yields: the server TLS settings and, when a CA signs
    /// the certificates, where its certificate is (the file to trust).
    struct Loaded {
        var configuration: TLSServerConfiguration
        var caCertificatePath: String?
        var createdCA: Bool
    }

    /// Loads the source. The certificate for requests without SNI (or with a
    /// name the CA cannot certify) names every one of `defaultNames`: the
    /// external host and the listen address, so a tap that reaches the
    /// server by its address verifies it as well as a client that uses the
    /// external URL. Blocks on disk I/O and maybe key generation: never call on a loop queue.
    func load(defaultNames: [String]) throws -> Loaded {
        switch self {
        case .developmentCA(let directory):
            let (authority, created) = try CertificateAuthority.loadOrCreate(in: directory)
            return try Self.minting(from: authority, defaultNames: defaultNames, created: created)
        case .authority(let authority):
            return try Self.minting(from: authority, defaultNames: defaultNames, created: false)
        case .files(let certificate, let key):
            let identity = try TLSIdentity(certificateFile: certificate, keyFile: key)
            return Loaded(configuration: TLSServerConfiguration(identity: identity), caCertificatePath: nil, createdCA: false)
        }
    }

    /// A configuration presenting the CA's leaf for the SNI name, else one for `defaultNames`.
    /// The default leaf is minted here, so a bad name fails before the server starts.
    private static func minting(from authority: CertificateAuthority, defaultNames: [String], created: Bool) throws -> Loaded {
        let fallback = try authority.leaf(forNames: defaultNames)
        let configuration = TLSServerConfiguration(identity: fallback) { serverName in
            guard let serverName else { return nil }
            // A name the CA cannot certify gets the default certificate; the client then reports the mismatch.
            return try? authority.leaf(for: serverName)
        }
        return Loaded(configuration: configuration, caCertificatePath: authority.certificatePath, createdCA: created)
    }
}
