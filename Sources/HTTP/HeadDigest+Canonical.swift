import Hashing

/// The semantic canonical form (version 1).
///
/// Every digest here is taken with the `DigestFunction` the initialiser is
/// given: SHA-256, or HMAC-SHA-256 under the recording's digest key (so a
/// head that carries a secret, a `Cookie` or a `?token=`, has no digest that
/// can be tested against guesses without the key).
///
/// `semantic` is the digest of the following bytes, written with the item
/// encoding of `DigestInput`: `count(n)` is `n` as 4 bytes big-endian;
/// `item(s)` is `count(length of s)` then the ISO-8859-1 (wire) bytes of `s`.
///
///     request:   item("request") item(method) item(scheme) item(authority) item(path)
///     response:  item("response") item(status as decimal digits)
///     then:      count(G) group_1 … group_G
///     group:     item(name) count(V) item(value_1) … item(value_V)
///
/// - `method` and `path` exactly as received (`path` includes the query; `*`
///   for asterisk form; empty for CONNECT). An RFC 8441 extended CONNECT's
///   method item is `CONNECT:` followed by its `:protocol` (`CONNECT:websocket`).
/// - `scheme`: the request's scheme (absolute-form target or HTTP/2
///   `:scheme`), else the scheme of the connection the request arrived on;
///   lowercased.
/// - `authority`: the request's authority (absolute-form target, HTTP/2
///   `:authority`, or `Host` as the HTTP/1.1 parser filled it), else the first
///   `Host` value, else empty; lowercased. So origin form over HTTP/1.1 and
///   absolute form or HTTP/2 compare equal when they name the same resource.
/// - The reason phrase, the HTTP version and the target form are not included.
/// - Groups: the regular fields grouped by name lowercased (ASCII), values in
///   the order they appeared within that name, groups sorted by name in
///   ascending byte order. Order between different names is thereby ignored,
///   order within one name kept.
/// - Left out entirely: `host` (carried by `authority`), `content-length`
///   (framing; the body digest covers the length), and hop-by-hop fields:
///   `connection`, `keep-alive`, `proxy-connection`, `te`,
///   `transfer-encoding`, `upgrade`, `http2-settings`, and every name listed
///   in a `Connection` value (comma-separated tokens, trimmed, lowercased).
/// - `cookie`: all values joined with "; " into one value (V = 1), so HTTP/2
///   cookie crumbs and a single HTTP/1.1 `Cookie` line compare equal.
///
/// The per-field digest of a name is the digest of its `group` bytes exactly
/// as above (also for the names the semantic form leaves out), and the target
/// digest is the digest of `item(scheme) item(authority) item(path)`.
extension HeadDigest {
    /// Fields that concern one connection only (RFC 9110 §7.6.1, RFC 9113 §8.2.2).
    public static let hopByHopFieldNames: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade", "http2-settings",
    ]

    /// Fields about framing that the semantic form leaves to the body digest.
    public static let framingFieldNames: Set<String> = ["content-length", "transfer-encoding"]

    /// Digests a request head.
    ///
    /// - Parameters:
    ///   - head: the head as parsed (HTTP/1.1) or decoded (HTTP/2).
    ///   - wire: the header section as it crossed the wire.
    ///   - connectionScheme: `https` or `http`, the scheme of the connection the
    ///     request travelled on; used only when the head carries no scheme
    ///     (origin form over HTTP/1.1).
    ///   - function: what every digest is taken with (the recording's).
    public init(request head: HTTPRequestHead, wire: WireForm, connectionScheme: String,
                using function: DigestFunction) {
        let scheme = HTTPField.lowercaseASCII(head.scheme ?? connectionScheme)
        let authority = HTTPField.lowercaseASCII(head.authority ?? head.fields["host"] ?? "")
        var input = DigestInput(capacity: HeadDigest.inputCapacity(head.fields, wire: wire), using: function)
        input.appendItem("request")
        // An RFC 8441 extended CONNECT names its protocol with the method (a
        // method is a token, so `CONNECT:websocket` is no method of its own).
        input.appendItem(head.connectProtocol.map { "\(head.method):\($0)" } ?? head.method)
        let targetStart = input.position
        input.appendItem(scheme)
        input.appendItem(authority)
        input.appendItem(head.path)
        let target = input.digest(of: targetStart..<input.position)
        self.init(startLine: &input, fields: head.fields, wire: wire, version: head.version)
        self.method = head.method
        self.target = target
        self.targetForm = head.targetForm
    }

    /// Digests a response head. The reason phrase is kept for explanations but
    /// is not part of the semantic form. Every digest is taken with `function`.
    public init(response head: HTTPResponseHead, wire: WireForm, using function: DigestFunction) {
        var input = DigestInput(capacity: HeadDigest.inputCapacity(head.fields, wire: wire), using: function)
        input.appendItem("response")
        input.appendItem(String(head.status))
        self.init(startLine: &input, fields: head.fields, wire: wire, version: head.version)
        self.status = head.status
        self.reasonPhrase = head.reason
    }

    /// Completes the semantic form after the start-line items and computes
    /// every digest from the one buffer: included groups first (their end is
    /// the semantic range), then the left-out groups for their per-field
    /// digests, then (HTTP/2) the decoded field list for `exact`. Each digest
    /// is taken as soon as its range is written; the allocations are the
    /// buffer, the grouping's index (`FieldGroup.groups`), `fields` and `fieldNames`.
    private init(startLine input: inout DigestInput, fields: HTTPFields, wire: WireForm, version: HTTPVersion) {
        let groups = FieldGroup.groups(of: fields)
        let connectionTokens = groups.first { $0.name == "connection" }.map { HeadDigest.connectionTokens($0.values) } ?? []
        func isHopByHop(_ group: FieldGroup) -> Bool {
            HeadDigest.hopByHopFieldNames.contains(group.name) || connectionTokens.contains(group.name)
        }
        var hopByHop: [String] = []
        var includedCount = 0, groupCount = 0
        for group in groups {
            groupCount += 1
            let hop = isHopByHop(group)
            if hop { hopByHop.append(group.name) }
            if !HeadDigest.isLeftOut(group.name, isHopByHop: hop) { includedCount += 1 }
        }
        var perField = FieldDigests(minimumCapacity: groupCount)
        input.appendCount(includedCount)
        for group in groups where !HeadDigest.isLeftOut(group.name, isHopByHop: isHopByHop(group)) {
            let start = input.position
            input.appendGroup(group)
            perField[group.name] = input.digest(of: start..<input.position)
        }
        let semanticEnd = input.position
        for group in groups where HeadDigest.isLeftOut(group.name, isHopByHop: isHopByHop(group)) {
            let start = input.position
            input.appendGroup(group)
            perField[group.name] = input.digest(of: start..<input.position)
        }

        let exact: SHA256Digest
        let wireLength: Int
        switch wire {
        case .http1(let head):
            exact = SHA256Digest.of(head, using: input.function)
            wireLength = head.count
        case .http2(let list):
            let start = input.position
            var length = 0
            for field in list {
                input.appendItem(field.name)
                input.appendItem(field.value)
                length += field.name.unicodeScalars.count + field.value.unicodeScalars.count
            }
            exact = input.digest(of: start..<input.position)
            wireLength = length
        }

        self.exact = exact
        self.semantic = input.digest(of: 0..<semanticEnd)
        self.fields = perField
        self.fieldNames = fields.map(\.name)
        self.hopByHop = hopByHop
        self.version = version
        self.wireLength = wireLength
    }

    /// Room for every item a head's digests are taken over, so the buffer
    /// is allocated once: the start line, each field twice (its group, and
    /// for HTTP/2 the decoded list) with its length prefixes. UTF-8 counts
    /// bound the ISO-8859-1 bytes written from above.
    static func inputCapacity(_ fields: HTTPFields, wire: WireForm) -> Int {
        func bytes<Fields: Sequence<HTTPField>>(_ fields: Fields) -> Int {
            fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 12 }
        }
        switch wire {
        case .http1: return 256 + bytes(fields)
        case .http2(let list): return 256 + bytes(fields) + bytes(list)
        }
    }

    /// The field names listed by `Connection` values: comma-separated tokens,
    /// trimmed, lowercased.
    static func connectionTokens(_ values: [String]) -> [String] {
        var tokens: [String] = []
        for value in values {
            for token in value.split(separator: ",") {
                let trimmed = trimmingOWS(token)
                if !trimmed.isEmpty { tokens.append(HTTPField.lowercaseASCII(trimmed)) }
            }
        }
        return tokens
    }

    /// Drops leading and trailing spaces and horizontal tabs (RFC 9110 OWS).
    private static func trimmingOWS(_ token: Substring) -> String {
        var slice = token
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }

    /// True for a lowercased name the semantic form leaves out: `host`,
    /// `content-length`, or a name that is hop-by-hop in that head.
    static func isLeftOut(_ name: String, isHopByHop: Bool) -> Bool {
        isHopByHop || name == "host" || name == "content-length"
    }

    /// True when this head has the lowercased field `name` and its semantic
    /// form includes it.
    public func semanticallyIncludes(_ name: String) -> Bool {
        fields[name] != nil && !HeadDigest.isLeftOut(name, isHopByHop: hopByHop.contains(name))
    }
}

