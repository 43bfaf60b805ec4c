import Wire

/// Names the client resolves itself, as curl's `--resolve
/// [+]HOST:PORT:ADDRESS[,ADDRESS]...` does: a connection to `HOST:PORT`
/// goes to `ADDRESS` while TLS (SNI, the certificate's name) and `Host`
/// keep the name. `HOST` `*` matches every name on that port, after the
/// named entries. `-HOST:PORT` takes back an earlier entry. A leading `+`
/// (curl: the entry expires after a minute) is accepted; here every entry
/// lasts the run.
///
/// The app's connections and the simulated browser's use it when they go
/// straight to the server (through a forward proxy the proxy resolves the
/// target, as with curl; the proxy's own name is looked up here too), and
/// Chromium gets it as `--host-resolver-rules` `MAP` entries. Of several
/// addresses the first is used (curl tries them in turn).
public struct ResolveTable: Hashable, Sendable {
    /// One `HOST:PORT:ADDRESS[,ADDRESS]...`.
    public struct Entry: Hashable, Sendable, CustomStringConvertible {
        /// Lowercased host name, or `*`.
        public var host: String
        public var port: UInt16
        /// Canonical IP texts (IPv6 without brackets), in the order given; never empty.
        public var addresses: [String]

        public var description: String {
            "\(host):\(port):" + addresses.map { $0.contains(":") ? "[\($0)]" : $0 }.joined(separator: ",")
        }
    }

    /// The entries in the order given, no two for the same host and port.
    public private(set) var entries: [Entry] = []

    public init() {}

    /// The table `specifications` describe, in order (`-HOST:PORT` removes an earlier entry).
    public init(parsing specifications: [String]) throws(ResolveError) {
        for specification in specifications { try add(specification) }
    }

    /// Adds one `--resolve` value. Throws for a missing part, a port that is
    /// not 1–65535, an address that is not an IP literal, a host that is not
    /// a host name, or a `HOST:PORT` given twice.
    public mutating func add(_ specification: String) throws(ResolveError) {
        var text = Substring(specification)
        let removes = text.hasPrefix("-")
        if removes || text.hasPrefix("+") { text = text.dropFirst() }
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, !parts[0].isEmpty else {
            throw ResolveError(specification, removes ? "expected -HOST:PORT" : "expected HOST:PORT:ADDRESS")
        }
        let host = parts[0].lowercased()
        guard host == "*" || ResolveTable.isHostName(host) else {
            throw ResolveError(specification, "'\(parts[0])' is not a host name (letters, digits, '-' and '.', or *)")
        }
        guard !parts[1].isEmpty, parts[1].allSatisfy(\.isASCII), parts[1].allSatisfy(\.isNumber) else {
            throw ResolveError(specification, parts[1].isEmpty ? "the port is missing" : "the port '\(parts[1])' is not a number")
        }
        guard let port = Int(parts[1]), (1...65535).contains(port) else {
            throw ResolveError(specification, "the port \(parts[1]) is out of range (1-65535)")
        }
        if removes {
            guard parts.count == 2 else { throw ResolveError(specification, "-HOST:PORT takes no address") }
            entries.removeAll { $0.host == host && $0.port == UInt16(port) }
            return
        }
        guard parts.count == 3, !parts[2].isEmpty else {
            throw ResolveError(specification, "the address is missing (HOST:PORT:ADDRESS)")
        }
        var addresses: [String] = []
        for piece in parts[2].split(separator: ",", omittingEmptySubsequences: false) {
            let literal = String(piece)
            guard !literal.isEmpty else { throw ResolveError(specification, "an address in the list is empty") }
            guard let address = SocketAddress(numericHost: literal, port: UInt16(port)) else {
                throw ResolveError(specification, "'\(literal)' is not an IPv4 or IPv6 address")
            }
            addresses.append(address.ip)
        }
        guard !entries.contains(where: { $0.host == host && $0.port == UInt16(port) }) else {
            throw ResolveError(specification, "\(host):\(port) is already given (one --resolve per HOST:PORT)")
        }
        entries.append(Entry(host: host, port: UInt16(port), addresses: addresses))
    }

    /// The address to dial for `host:port`: a named entry first, then `*`; nil when neither.
    public func address(host: String, port: UInt16) -> String? {
        let lowered = host.lowercased()
        return (entries.first { $0.host == lowered && $0.port == port } ?? entries.first { $0.host == "*" && $0.port == port })?
            .addresses.first
    }

    /// Chromium's `--host-resolver-rules` entries for the table, named
    /// entries before `*` (Chromium takes the first rule that matches):
    /// `MAP HOST:PORT ADDRESS` (the port is kept).
    public var chromiumRules: [String] {
        let ordered = entries.filter { $0.host != "*" } + entries.filter { $0.host == "*" }
        return ordered.map { entry in
            let address = entry.addresses[0]
            return "MAP \(entry.host):\(entry.port) \(address.contains(":") ? "[\(address)]" : address)"
        }
    }

    /// RFC 1123 host names: dot-separated labels of letters, digits and
    /// `-` (not at a label's ends), each 1–63 bytes, 253 in all; a final dot allowed.
    public static func isHostName(_ name: String) -> Bool {
        let bare = name.hasSuffix(".") ? String(name.dropLast()) : name
        guard !bare.isEmpty, bare.utf8.count <= 253 else { return false }
        return bare.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-") }
        }
    }
}

/// A `--resolve` value Intact cannot use, and why.
public struct ResolveError: Error, Hashable, Sendable, CustomStringConvertible {
    public var specification: String
    public var reason: String

    init(_ specification: String, _ reason: String) {
        self.specification = specification
        self.reason = reason
    }

    public var description: String { "--resolve '\(specification)': \(reason)" }
}
