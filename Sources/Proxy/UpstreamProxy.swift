import Transport

/// `--upstream-proxy`: every upstream connection goes through this HTTP
/// proxy with CONNECT (also for plain-HTTP origins), except to hosts the
/// exemptions name (`--no-upstream-proxy`, or `NO_PROXY` when the proxy came
/// from `HTTPS_PROXY`).
public struct UpstreamProxy: Sendable, Hashable, CustomStringConvertible {
    public var address: HTTPProxyAddress
    /// `NO_PROXY`-style entries: host names, `.domain` suffixes, IP literals, `*`.
    public var exemptions: [String]

    public init(address: HTTPProxyAddress, exemptions: [String] = []) {
        self.address = address
        self.exemptions = exemptions
    }

    /// Parses `http://[USER:PASSWORD@]HOST:PORT` (`HTTPProxyAddress(url:)`); nil when malformed.
    public init?(url: String, exemptions: [String] = []) {
        guard let address = HTTPProxyAddress(url: url) else { return nil }
        self.init(address: address, exemptions: exemptions)
    }

    /// `http://host:port`, credentials left out.
    public var description: String { address.description }

    /// The proxy to reach `host` through, or nil when `host` is exempt.
    public func address(for host: String) -> HTTPProxyAddress? {
        HTTPProxyAddress.isExempt(host: host, noProxy: exemptions.joined(separator: ",")) ? nil : address
    }
}
