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
///   `HopByHopFieldNames.fixed` (`connection`, `keep-alive`, `te`, …) and
///   every name listed in a `Connection` value (comma-separated tokens,
///   trimmed, lowercased).
/// - `cookie`: all values joined with "; " into one value (V = 1), so HTTP/2
///   cookie crumbs and a single HTTP/1.1 `Cookie` line compare equal.
///
/// The per-field digest of a name is the digest of its `group` bytes exactly
/// as above (also for the names the semantic form leaves out), and the target
/// digest is the digest of `item(scheme) item(authority) item(path)`.
extension HeadDigest {
    /// The lowercased names the semantic form leaves out besides hop-by-hop
    /// ones: `host` (carried by `authority`) and `content-length` (framing).
    static let leftOutFieldNames: [String] = ["host", "content-length"]

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
        var none: HeadDigestMemo? = nil
        self.init(request: head, wire: wire, connectionScheme: connectionScheme, using: function, memo: &none,
                  use: .ignore)
    }

    /// Digests a request head as `init(request:wire:connectionScheme:using:)`
    /// does, taking each digest from `memo` where its input is the same
    /// bytes (the request as the other leg recorded it), else from `earlier`
    /// (the head before that, as a connection keeps it); on return `memo`
    /// is this head's when `keepingMemo` (another head will use it), else
    /// nil. The digests are the same with or without a memo.
    public init(request head: HTTPRequestHead, wire: WireForm, connectionScheme: String,
                using function: DigestFunction, memo: inout HeadDigestMemo?, earlier: HeadDigestMemo? = nil,
                keepingMemo: Bool) {
        self.init(request: head, wire: wire, connectionScheme: connectionScheme, using: function, memo: &memo,
                  earlier: earlier, use: keepingMemo ? .readAndKeep : .read)
    }

    private init(request head: HTTPRequestHead, wire: WireForm, connectionScheme: String,
                 using function: DigestFunction, memo: inout HeadDigestMemo?, earlier: HeadDigestMemo? = nil,
                 use: MemoUse) {
        let scheme = head.scheme ?? connectionScheme
        let authority = head.authority ?? head.fields[.host] ?? ""
        let startLine = 40 + head.method.rawValue.utf8.count + (head.connectProtocol?.utf8.count ?? 0) + scheme.utf8.count
            + authority.utf8.count + head.path.utf8.count
        let capacity = HeadDigest.inputCapacity(head.fields, wire: wire)
        // Built in place: the closure fills `self` (no digest value returned and copied out of it).
        self.init(untakenVersion: head.version)
        HeadDigest.withInput(capacity: startLine + capacity.input, memo: &memo, earlier: earlier, use: use,
                             maxDigests: head.fields.count + 4, using: function) { input in
            input.appendItem("request")
            // An RFC 8441 extended CONNECT names its protocol with the method (a
            // method is a token, so `CONNECT:websocket` is no method of its own).
            if let connectProtocol = head.connectProtocol {
                let at = input.beginItem()
                input.appendText(head.method.rawValue)
                input.appendText(":")
                input.appendText(connectProtocol)
                input.endItem(at)
            } else {
                input.appendItem(head.method.rawValue)
            }
            let targetStart = input.position
            input.appendItem(scheme, lowercasingASCII: true)
            input.appendItem(authority, lowercasingASCII: true)
            input.appendItem(head.path)
            target = input.digest(of: targetStart..<input.position, using: function)
            digestSection(after: &input, fields: head.fields, nameBytes: capacity.names, wire: wire, using: function)
            method = head.method.rawValue
            targetForm = head.targetForm
            if case .http2(let list) = wire { pseudoFieldOrder = HTTP2PseudoFieldOrder(requestList: list) }
        }
    }

    /// Digests a response head. The reason phrase is kept for explanations but
    /// is not part of the semantic form. Every digest is taken with `function`.
    public init(response head: HTTPResponseHead, wire: WireForm, using function: DigestFunction) {
        var none: HeadDigestMemo? = nil
        self.init(response: head, wire: wire, using: function, memo: &none, use: .ignore)
    }

    /// Digests a response head as `init(response:wire:using:)` does, taking
    /// each digest from `memo` where its input is the same bytes (the
    /// response as the other leg recorded it), else from `earlier` (the
    /// head before that); on return `memo` is this head's when
    /// `keepingMemo` (another head will use it), else nil. The digests are
    /// the same with or without a memo.
    public init(response head: HTTPResponseHead, wire: WireForm, using function: DigestFunction,
                memo: inout HeadDigestMemo?, earlier: HeadDigestMemo? = nil, keepingMemo: Bool) {
        self.init(response: head, wire: wire, using: function, memo: &memo, earlier: earlier,
                  use: keepingMemo ? .readAndKeep : .read)
    }

    private init(response head: HTTPResponseHead, wire: WireForm, using function: DigestFunction,
                 memo: inout HeadDigestMemo?, earlier: HeadDigestMemo? = nil, use: MemoUse) {
        let capacity = HeadDigest.inputCapacity(head.fields, wire: wire)
        self.init(untakenVersion: head.version)
        HeadDigest.withInput(capacity: 64 + capacity.input, memo: &memo, earlier: earlier, use: use,
                             maxDigests: head.fields.count + 4, using: function) { input in
            input.appendItem("response")
            input.appendItem(decimal: head.status.code)
            digestSection(after: &input, fields: head.fields, nameBytes: capacity.names, wire: wire, using: function)
            status = head.status.code
            reasonPhrase = head.reason
        }
    }

    /// What a head digest does with a memo.
    private enum MemoUse {
        /// Nothing: the plain initialisers.
        case ignore
        /// Takes digests from it, then leaves it nil.
        case read
        /// Takes digests from it, then replaces it with this head's.
        case readAndKeep
    }

    /// Calls `body` with a digest input that uses `memo` (and `earlier`) as
    /// `use` says (`DigestInput.with(capacity:memo:earlier:keep:maxDigests:using:_:)`);
    /// a head takes at most one digest per field (its groups) plus its
    /// target, its semantic form and its wire form (`exact`).
    @inline(__always)
    private static func withInput(capacity: Int, memo: inout HeadDigestMemo?, earlier: HeadDigestMemo?, use: MemoUse,
                                  maxDigests: Int, using function: DigestFunction,
                                  _ body: (inout DigestInput) -> Void) {
        guard use != .ignore else { return DigestInput.with(capacity: capacity, body) }
        return DigestInput.with(capacity: capacity, memo: &memo, earlier: earlier, keep: use == .readAndKeep,
                                maxDigests: maxDigests, using: function, body)
    }

    /// Completes the semantic form after the start-line items and sets
    /// every digest from the one buffer, in one walk of the sorted names
    /// (`FieldNameIndex`) to classify them, then the included groups (their
    /// end is the semantic range), the left-out groups for their per-field
    /// digests, and (HTTP/2) the decoded field list for `exact`. Each digest
    /// is taken as soon as its range is written. Allocates `fields`,
    /// `fieldNames` and, when the head has any, `hopByHop`; nothing else.
    /// `nameBytes` is the sum of the fields' name UTF-8 counts (`inputCapacity`).
    private mutating func digestSection(after input: inout DigestInput, fields: HTTPFields, nameBytes: Int, wire: WireForm,
                                        using function: DigestFunction) {
        let groupStart = input.position
        let perField: FieldDigests, hopByHop: [String], semanticEnd: Int, fieldNames: [String]
        if let (prior, groups, memo) = input.priorSection(holding: fields) {
            // The fields a memo's head had: the same group bytes, digests and names, and the same section.
            input.appendPrior(groups, of: memo)
            (perField, hopByHop, fieldNames) = (prior.perField, prior.hopByHop, prior.fieldNames)
            semanticEnd = groupStart + prior.semanticLength
            if input.keepsMemo { input.noteSection(prior, of: fields, at: groupStart) }
        } else {
            (perField, hopByHop, semanticEnd) = fields.fields.withUnsafeBufferPointer { section in
                FieldNameIndex.with(section, nameBytes: nameBytes) { index in HeadDigest.digestGroups(of: &index, into: &input, using: function) }
            }
            fieldNames = fields.map(\.name)
            if input.keepsMemo {
                input.noteSection(HeadDigestMemo.Section(groupsCount: input.position - groupStart,
                                                         semanticLength: semanticEnd - groupStart, perField: perField,
                                                         hopByHop: hopByHop, fieldNames: fieldNames), of: fields, at: groupStart)
            }
        }

        let exact: SHA256Digest
        let wireLength: Int
        switch wire {
        case .http1(let head):
            // The raw bytes joined to the input, so `exact` is a range a memo can hold.
            let start = input.position
            head.withUnsafeBytes { input.appendRaw($0) }
            exact = input.digest(of: start..<input.position, using: function)
            wireLength = head.count
        case .http2(let list):
            let start = input.position
            // Read in place through the buffer: iterating the array copies each field (two retains, two releases).
            list.withUnsafeBufferPointer { list in
                for position in list.indices {
                    input.appendItem(list[position].name)
                    input.appendItem(list[position].value)
                }
            }
            exact = input.digest(of: start..<input.position, using: function)
            // One ISO-8859-1 byte per scalar: the items' bytes are the decoded lengths.
            wireLength = input.position - start - 8 * list.count
        }

        self.exact = exact
        self.semantic = input.digest(of: 0..<semanticEnd, using: function)
        self.fields = perField
        self.fieldNames = fieldNames
        self.hopByHop = hopByHop
        self.wireLength = wireLength
    }

    /// Classifies the groups of `index` (hop-by-hop, left out), then writes
    /// `count(included)` and the included groups, then the left-out ones,
    /// each group's digest taken over its own bytes. Returns the per-field
    /// digests, the hop-by-hop names (sorted) and the end of the semantic form.
    private static func digestGroups(of index: inout FieldNameIndex, into input: inout DigestInput, using function: DigestFunction)
        -> (FieldDigests, [String], semanticEnd: Int) {
        let groups = index.groups
        let connection = groups.first { index.group($0, isNamed: connectionName) }
        var listedLengths: UInt64 = 0
        if let connection {
            _ = connectionTokens(of: connection, in: index) { token in
                listedLengths |= lengthBit(token.count)
                return false
            }
        }
        var hopByHop: [String] = []
        var includedCount = 0
        for offset in groups.indices {
            let name = index.nameBytes(of: groups[offset])
            let length = lengthBit(name.count)
            let hop = (hopByHopLengths & length != 0 && hopByHopNameBytes.contains { $0.elementsEqual(name) })
                || (listedLengths & length != 0 && connectionTokens(of: connection!, in: index) { token in
                    token.count == name.count && zip(token, name).allSatisfy { ($0 &- 0x41 < 26 ? $0 | 0x20 : $0) == $1 }
                })
            groups[offset].isHopByHop = hop
            groups[offset].isLeftOut = hop || (leftOutLengths & length != 0 && leftOutNameBytes.contains { $0.elementsEqual(name) })
            if hop, hopByHop.isEmpty, index.group(groups[offset], isNamed: connectionName) {
                hopByHop = onlyConnection // the usual case shares one array
            } else if hop {
                hopByHop.append(index.name(of: groups[offset]))
            }
            if !groups[offset].isLeftOut { includedCount += 1 }
        }
        var semanticEnd = 0
        // Written in two runs (the included groups must be contiguous), each
        // group's digest stored at its place in name order.
        let entries = [FieldDigests.Element](unsafeUninitializedCapacity: groups.count) { slots, initialized in
            input.appendCount(includedCount)
            for leftOutRun in 0..<2 {
                for offset in groups.indices where groups[offset].isLeftOut == (leftOutRun == 1) {
                    let start = input.position
                    input.appendGroup(groups[offset], of: index)
                    (slots.baseAddress! + offset).initialize(to: (key: index.name(of: groups[offset]),
                                                                  value: input.digest(of: start..<input.position, using: function)))
                }
                if leftOutRun == 0 { semanticEnd = input.position }
            }
            initialized = groups.count
        }
        return (FieldDigests(sortedByName: entries, byteOrderIsNameOrder: index.namesAreLatin1), hopByHop, semanticEnd)
    }

    /// Calls `body` with each token the `Connection` values of the group
    /// `connection` list (comma-separated, spaces and tabs trimmed, empty
    /// ones skipped), as bytes in their case, until it returns true; returns
    /// whether it did. Bytes, not characters: the same tokens for the
    /// ISO-8859-1 text a field holds.
    private static func connectionTokens(of connection: FieldNameIndex.Group, in index: FieldNameIndex,
                                         _ body: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        for entry in index.entries(of: connection) {
            let stopped = FieldNameIndex.withUTF8(index.fields[entry.field].value) { value in
                HTTP1Grammar.forEachListElement(value) { token in !token.isEmpty && body(token) }
            }
            if stopped { return true }
        }
        return false
    }

    /// One bit per name length (63 for any longer), so most names are ruled
    /// out of a list of names by one test.
    private static func lengthBit(_ count: Int) -> UInt64 { 1 << UInt64(min(count, 63)) }

    private static let connectionName = Array("connection".utf8)
    private static let onlyConnection = ["connection"]
    private static let hopByHopNameBytes = HopByHopFieldNames.fixed.map { Array($0.utf8) }
    private static let hopByHopLengths = hopByHopNameBytes.reduce(0) { $0 | lengthBit($1.count) }
    private static let leftOutNameBytes = leftOutFieldNames.map { Array($0.utf8) }
    private static let leftOutLengths = leftOutNameBytes.reduce(0) { $0 | lengthBit($1.count) }

    /// Room for every item a head's digests are taken over besides the start
    /// line, so the buffer is never grown: each field twice (its group, and
    /// for HTTP/2 the decoded list) with its length prefixes, and an
    /// HTTP/1.1 head's wire bytes. UTF-8 counts
    /// bound the ISO-8859-1 bytes written from them. Also returns the sum of
    /// the names' UTF-8 counts (`FieldNameIndex.with(_:nameBytes:_:)`), so the
    /// fields are walked once for both.
    static func inputCapacity(_ fields: HTTPFields, wire: WireForm) -> (input: Int, names: Int) {
        var names = 0, values = 0
        for position in fields.fields.indices {
            names += fields.fields[position].name.utf8.count
            values += fields.fields[position].value.utf8.count
        }
        let input = 8 + names + values + 12 * fields.count
        switch wire {
        case .http1(let head): return (input + head.count, names)
        case .http2(let list):
            return (list.indices.reduce(input) { $0 + list[$1].name.utf8.count + list[$1].value.utf8.count + 12 }, names)
        }
    }

    /// True for a lowercased name the semantic form leaves out: `host`,
    /// `content-length`, or a name that is hop-by-hop in that head.
    static func isLeftOut(_ name: String, isHopByHop: Bool) -> Bool {
        isHopByHop || leftOutFieldNames.contains(name)
    }

    /// True when this head has the lowercased field `name` and its semantic
    /// form includes it.
    public func semanticallyIncludes(_ name: String) -> Bool {
        fields[name] != nil && !HeadDigest.isLeftOut(name, isHopByHop: hopByHop.contains(name))
    }
}

