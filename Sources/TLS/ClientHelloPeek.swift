import Hashing

/// What a ClientHello says about where the client wants to go, read before
/// any TLS engine sees the bytes.
public struct ClientHelloSummary: Sendable, Hashable {
    /// The SNI host name, lowercased; `nil` when the client sent none, or sent
    /// one that is not a valid DNS host name (see `serverNameIssue`).
    public var serverName: String?
    /// The SNI bytes exactly as the client sent them; nil without SNI.
    public var serverNameSent: [UInt8]?
    /// Why the SNI the client sent is not a valid host name (an IP address,
    /// `host:port`, bad characters, too long); nil when it is one or absent.
    /// Such a name is accepted, as nginx, HAProxy and mitmproxy accept it:
    /// the server picks a certificate by other means and records this.
    public var serverNameIssue: String?
    /// The ALPN protocols offered, in the client's order; empty without the extension.
    public var alpn: [String]
    /// `legacy_version` of the ClientHello (0x0303 for TLS 1.2 and 1.3 clients).
    public var legacyVersion: UInt16
    /// The `supported_versions` extension without GREASE values (e.g. `[0x0304, 0x0303]`);
    /// empty when the extension is absent (a TLS 1.2-only client).
    public var supportedVersions: [UInt16]

    public init(serverName: String?, alpn: [String], legacyVersion: UInt16, supportedVersions: [UInt16],
                serverNameSent: [UInt8]? = nil, serverNameIssue: String? = nil) {
        self.serverName = serverName
        self.serverNameSent = serverNameSent ?? serverName.map { Array($0.utf8) }
        self.serverNameIssue = serverNameIssue
        self.alpn = alpn
        self.legacyVersion = legacyVersion
        self.supportedVersions = supportedVersions
    }

    /// The SNI as sent, printable: visible ASCII kept, every other byte
    /// (NUL, controls, non-ASCII) and the backslash written as `\xHH`.
    /// Nil without SNI.
    public var escapedServerNameSent: String? {
        serverNameSent.map(ClientHelloSummary.escaped)
    }

    /// The name inside an SNI that is not a host name but says where the client
    /// means to go: the address of an IP literal, the host of `host:port`
    /// (Go clients send those). Nil for a valid host name or anything else.
    public var serverNameAddress: String? {
        guard serverNameIssue != nil, let sent = serverNameSent else { return nil }
        let colons = sent.filter { $0 == UInt8(ascii: ":") }.count
        // One colon is `host:port` (an IPv6 literal has at least two).
        if colons != 1, HostNameSyntax.check(sent) == .ipAddress { return String(decoding: sent, as: UTF8.self) }
        guard let colon = sent.lastIndex(of: UInt8(ascii: ":")),
              sent[(colon + 1)...].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              colon + 1 < sent.count else { return nil }
        var host = Array(sent[..<colon])
        if host.first == UInt8(ascii: "["), host.last == UInt8(ascii: "]") { host = Array(host.dropFirst().dropLast()) }
        switch HostNameSyntax.check(host) {
        case .hostName, .ipAddress: return String(decoding: host, as: UTF8.self).lowercased()
        case .invalid: return nil
        }
    }

    static func escaped(_ bytes: [UInt8]) -> String {
        var text = ""
        for byte in bytes {
            if byte >= 0x21 && byte <= 0x7E && byte != UInt8(ascii: "\\") {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                text += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return text
    }
}

/// Reads SNI, ALPN and versions from the first bytes of a connection without
/// consuming them, so the proxy can pick a certificate or route before the
/// handshake. Pure Swift and bounded: it never reads past the ClientHello and
/// rejects one longer than `maximumHelloLength`.
public enum ClientHelloPeek {
    public enum Outcome: Sendable, Hashable {
        /// The bytes so far are a valid prefix; call again with more.
        case needMoreData
        /// The bytes are not a TLS ClientHello this peek accepts (plain HTTP, SSLv2,
        /// a malformed or oversized hello); `reason` says which, for a network engineer.
        case notTLS(reason: String)
        /// A well-formed ClientHello. An SNI that is not a valid DNS host
        /// name does not make it fail: `serverNameIssue` says what is wrong.
        case clientHello(ClientHelloSummary)
    }

    /// The largest ClientHello handshake message accepted (its body, without the 4-byte header).
    public static let maximumHelloLength = 16 * 1024

    private static let recordHeaderLength = 5
    private static let handshakeRecordType: UInt8 = 22
    private static let clientHelloType: UInt8 = 1
    private static let maximumRecordLength = 16 * 1024

    /// Inspects the bytes received so far on a connection.
    public static func inspect(_ bytes: [UInt8]) -> Outcome {
        var handshake: [UInt8] = []
        var offset = 0
        while true {
            if let first = bytes[safe: offset], first != handshakeRecordType {
                return .notTLS(reason: offset == 0 ? describeForeignStart(bytes)
                                                   : "a record of type \(first) interrupts the ClientHello")
            }
            guard bytes.count - offset >= recordHeaderLength else {
                return bytes.count > offset + 1 && bytes[offset + 1] != 3
                    ? .notTLS(reason: "record version major byte \(bytes[offset + 1]) is not 3") : .needMoreData
            }
            let major = bytes[offset + 1]
            let length = Int(bytes[offset + 3]) << 8 | Int(bytes[offset + 4])
            guard major == 3 else { return .notTLS(reason: "record version major byte \(major) is not 3") }
            guard (1...maximumRecordLength).contains(length) else {
                return .notTLS(reason: "handshake record length \(length) is outside 1...\(maximumRecordLength)")
            }
            let bodyStart = offset + recordHeaderLength
            let available = min(bytes.count, bodyStart + length)
            handshake += bytes[bodyStart..<available]
            if handshake.count >= 4 {
                guard handshake[0] == clientHelloType else {
                    return .notTLS(reason: "first handshake message has type \(handshake[0]), not ClientHello (1)")
                }
                let helloLength = Int(handshake[1]) << 16 | Int(handshake[2]) << 8 | Int(handshake[3])
                guard helloLength <= maximumHelloLength else {
                    return .notTLS(reason: "ClientHello of \(helloLength) bytes exceeds the \(maximumHelloLength)-byte limit")
                }
                if handshake.count >= 4 + helloLength {
                    return parse(body: handshake[4..<(4 + helloLength)])
                }
            }
            guard available == bodyStart + length else { return .needMoreData }
            offset = available
        }
    }

    /// Names what the connection starts with instead of a handshake record.
    private static func describeForeignStart(_ bytes: [UInt8]) -> String {
        let first = bytes[0]
        if first & 0x80 != 0 {
            return "an SSLv2-format hello (first byte \(HostNameSyntax.describe(first))), which TLS 1.2+ does not accept"
        }
        let line = bytes.prefix(64).prefix { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }
        if first >= UInt8(ascii: "A"), first <= UInt8(ascii: "Z"), line.allSatisfy({ (0x20...0x7e).contains($0) }) {
            return "plain text where a TLS ClientHello was expected (an HTTP request? \"\(String(decoding: line, as: UTF8.self))\")"
        }
        return "first byte \(HostNameSyntax.describe(first)) is not a TLS handshake record (22)"
    }

    /// Parses a complete ClientHello body (RFC 8446 §4.1.2).
    private static func parse(body: ArraySlice<UInt8>) -> Outcome {
        var reader = ByteReader(body)
        do throws(PeekFailure) {
            let legacyVersion = try reader.uint16("legacy_version")
            try reader.skip(32, "random")
            _ = try reader.vector(lengthBytes: 1, "legacy_session_id")
            let suites = try reader.vector(lengthBytes: 2, "cipher_suites")
            guard !suites.isEmpty, suites.count % 2 == 0 else { throw PeekFailure("cipher_suites has an odd or zero length") }
            _ = try reader.vector(lengthBytes: 1, "legacy_compression_methods")
            var summary = ClientHelloSummary(serverName: nil, alpn: [], legacyVersion: legacyVersion, supportedVersions: [])
            if reader.isAtEnd { return .clientHello(summary) }  // a hello without extensions
            var extensions = ByteReader(try reader.vector(lengthBytes: 2, "extensions"))
            guard reader.isAtEnd else { throw PeekFailure("bytes follow the extensions") }
            var seen = Set<UInt16>()
            var rawServerName: [UInt8]?
            while !extensions.isAtEnd {
                let type = try extensions.uint16("extension type")
                var data = ByteReader(try extensions.vector(lengthBytes: 2, "extension \(type)"))
                guard seen.insert(type).inserted else { throw PeekFailure("extension \(type) appears twice") }
                switch type {
                case 0: rawServerName = try serverName(&data)
                case 16: summary.alpn = try alpn(&data)
                case 43: summary.supportedVersions = try supportedVersions(&data)
                default: continue
                }
                guard data.isAtEnd else { throw PeekFailure("extension \(type) has trailing bytes") }
            }
            if let rawServerName {
                summary.serverNameSent = rawServerName
                switch HostNameSyntax.check(rawServerName) {
                case _ where rawServerName.filter({ $0 == UInt8(ascii: ":") }).count == 1:
                    summary.serverNameIssue = "SNI is not a valid host name: a ':' is not allowed in a host name (host:port)"
                case .hostName:
                    summary.serverName = String(decoding: rawServerName, as: UTF8.self).lowercased()
                case .ipAddress:
                    summary.serverNameIssue = "SNI carries the IP address \(ClientHelloSummary.escaped(rawServerName)), which RFC 6066 forbids"
                case .invalid(let reason):
                    summary.serverNameIssue = "SNI is not a valid host name: \(reason)"
                }
            }
            return .clientHello(summary)
        } catch {
            return .notTLS(reason: "malformed ClientHello: \(error.reason)")
        }
    }

    /// server_name (RFC 6066 §3): the host_name entry, if any.
    private static func serverName(_ data: inout ByteReader) throws(PeekFailure) -> [UInt8]? {
        var list = ByteReader(try data.vector(lengthBytes: 2, "server_name_list"))
        guard !list.isAtEnd else { throw PeekFailure("server_name_list is empty") }
        var hostName: [UInt8]?
        while !list.isAtEnd {
            let nameType = try list.uint8("name_type")
            let name = try list.vector(lengthBytes: 2, "host_name")
            guard nameType == 0 else { continue }
            guard hostName == nil else { throw PeekFailure("server_name has two host_name entries") }
            hostName = Array(name)
        }
        return hostName
    }

    /// application_layer_protocol_negotiation (RFC 7301 §3.1).
    private static func alpn(_ data: inout ByteReader) throws(PeekFailure) -> [String] {
        var list = ByteReader(try data.vector(lengthBytes: 2, "protocol_name_list"))
        var names: [String] = []
        while !list.isAtEnd {
            let name = try list.vector(lengthBytes: 1, "protocol_name")
            guard !name.isEmpty else { throw PeekFailure("an ALPN protocol name is empty") }
            names.append(String(decoding: name, as: UTF8.self))
        }
        guard !names.isEmpty else { throw PeekFailure("protocol_name_list is empty") }
        return SharedTLSValues.shared(names)
    }

    /// supported_versions (RFC 8446 §4.2.1), GREASE values (RFC 8701) dropped.
    private static func supportedVersions(_ data: inout ByteReader) throws(PeekFailure) -> [UInt16] {
        var list = ByteReader(try data.vector(lengthBytes: 1, "supported_versions"))
        var versions: [UInt16] = []
        while !list.isAtEnd {
            let version = try list.uint16("version")
            let isGREASE = version & 0x0f0f == 0x0a0a && version >> 8 == version & 0xff
            if !isGREASE { versions.append(version) }
        }
        return SharedTLSValues.shared(versions)
    }
}

/// Why a ClientHello could not be parsed.
private struct PeekFailure: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// A bounds-checked cursor over ClientHello bytes.
private struct ByteReader {
    private let bytes: ArraySlice<UInt8>
    private var index: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    var isAtEnd: Bool { index == bytes.endIndex }

    mutating func uint8(_ field: String) throws(PeekFailure) -> UInt8 {
        guard index < bytes.endIndex else { throw PeekFailure("\(field) runs past the end") }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func uint16(_ field: String) throws(PeekFailure) -> UInt16 {
        UInt16(try uint8(field)) << 8 | UInt16(try uint8(field))
    }

    mutating func skip(_ count: Int, _ field: String) throws(PeekFailure) {
        guard bytes.endIndex - index >= count else { throw PeekFailure("\(field) runs past the end") }
        index += count
    }

    /// A length-prefixed vector whose length field is `lengthBytes` long.
    mutating func vector(lengthBytes: Int, _ field: String) throws(PeekFailure) -> ArraySlice<UInt8> {
        var length = 0
        for _ in 0..<lengthBytes { length = length << 8 | Int(try uint8(field)) }
        guard bytes.endIndex - index >= length else {
            throw PeekFailure("\(field) claims \(length) bytes but only \(bytes.endIndex - index) remain")
        }
        defer { index += length }
        return bytes[index..<(index + length)]
    }
}

private extension Array {
    subscript(safe index: Int) -> Element? {
        indices.contains(index) ? self[index] : nil
    }
}
