import HTTP
import Hashing

/// Decodes an exchange record's recording line field by field from its
/// bytes (`JSONLineCursor`): no `JSONDecoder`, no Foundation object per
/// value; the line written by `ExchangeRecord.writeLine` (members in any
/// order, whitespace allowed).
///
/// Contract: the record it returns is `==` to the one `JSONDecoder` decodes
/// from the same line (`ExchangeRecordLineDecoderTests` checks it on every
/// record shape the writer makes, and on edited lines). It answers nil —
/// and the reader then decodes the line with `JSONDecoder`, which reads it
/// or names what is wrong — for anything it was not made for: a member it
/// does not know (a line of a newer build), one given twice, a `null`, a
/// value of another type or form, malformed JSON. A new stored property of
/// a record type must be read here too, or lines that carry it take the
/// slow path (the differential test shows it).
enum ExchangeRecordLineDecoder {
    /// The record on `line` (without its newline); nil to defer to the general parser.
    static func decode(_ line: UnsafeRawBufferPointer) -> ExchangeRecord? {
        var cursor = JSONLineCursor(line)
        guard let record = record(&cursor), cursor.atEnd() else { return nil }
        return record
    }

    /// True when the line starts as the writer starts an exchange line: `{"type":"exchange"`.
    static func looksLikeExchange(_ line: UnsafeRawBufferPointer) -> Bool {
        let prefix: StaticString = "{\"type\":\"exchange\""
        return line.count > prefix.utf8CodeUnitCount
            && UnsafeRawBufferPointer(rebasing: line[..<prefix.utf8CodeUnitCount]).equals(prefix)
    }

    // MARK: Helpers

    /// Stores `value` in an empty slot: false when the value is nil or the
    /// slot was filled already (a member given twice).
    @inline(__always)
    private static func put<T>(_ slot: inout T?, _ value: T?) -> Bool {
        guard slot == nil, let value else { return false }
        slot = value
        return true
    }

    /// Reads an object, handing each member's key to `member`, which reads
    /// the value (false: not understood).
    @inline(__always)
    private static func object(_ cursor: inout JSONLineCursor,
                               _ member: (inout JSONLineCursor, UnsafeRawBufferPointer) -> Bool) -> Bool {
        guard cursor.openObject() else { return false }
        var key = UnsafeRawBufferPointer(start: nil, count: 0)
        var first = true
        while true {
            switch cursor.nextKey(first: first, key: &key) {
            case .end: return true
            case .malformed: return false
            case .member: first = false
            }
            guard member(&cursor, key) else { return false }
        }
    }

    /// Reads an array whose elements `element` reads.
    @inline(__always)
    private static func array<T>(_ cursor: inout JSONLineCursor, _ element: (inout JSONLineCursor) -> T?) -> [T]? {
        guard cursor.openArray() else { return nil }
        var result: [T] = []
        var first = true
        while true {
            switch cursor.nextElement(first: first) {
            case .end: return result
            case .malformed: return nil
            case .member: first = false
            }
            guard let value = element(&cursor) else { return nil }
            result.append(value)
        }
    }

    private static func strings(_ cursor: inout JSONLineCursor) -> [String]? {
        array(&cursor) { $0.string() }
    }

    private static func enumValue<E: RawRepresentable>(_ cursor: inout JSONLineCursor, _: E.Type) -> E?
        where E.RawValue == String {
        cursor.string().flatMap(E.init(rawValue:))
    }

    // MARK: The record

    private static func record(_ cursor: inout JSONLineCursor) -> ExchangeRecord? {
        var type: String?, exchangeID: String?, traceID: String?, tap: String?, legs: [ExchangeRecord.Leg]?
        var step: String?, faults: [ExchangeRecord.RecordedFault]?, error: ExchangeRecord.Failure?
        var retries: [ExchangeRecord.Failure]?, connection: RequestlessConnection?
        let ok = object(&cursor) { cursor, key in
            if key.equals("type") { return put(&type, cursor.string()) }
            if key.equals("exchangeID") { return put(&exchangeID, cursor.string()) }
            if key.equals("traceID") { return put(&traceID, cursor.string()) }
            if key.equals("tap") { return put(&tap, cursor.string()) }
            if key.equals("legs") { return put(&legs, array(&cursor, leg)) }
            if key.equals("authFlowStep") { return put(&step, cursor.string()) }
            if key.equals("faults") { return put(&faults, array(&cursor, fault)) }
            if key.equals("error") { return put(&error, failure(&cursor)) }
            if key.equals("retries") { return put(&retries, array(&cursor, failure)) }
            if key.equals("connection") { return put(&connection, connectionEvent(&cursor)) }
            return false
        }
        guard ok, type == RecordingFormat.LineType.exchange.rawValue, let exchangeID, let tap, let legs, let faults else {
            return nil
        }
        return ExchangeRecord(exchangeID: exchangeID, traceID: traceID, tap: tap, legs: legs, authFlowStep: step,
                              faults: faults, error: error, retries: retries, connection: connection)
    }

    private static func fault(_ cursor: inout JSONLineCursor) -> ExchangeRecord.RecordedFault? {
        var name: String?, detail: String?
        let ok = object(&cursor) { cursor, key in
            if key.equals("name") { return put(&name, cursor.string()) }
            if key.equals("detail") { return put(&detail, cursor.string()) }
            return false
        }
        guard ok, let name else { return nil }
        return ExchangeRecord.RecordedFault(name: name, detail: detail)
    }

    private static func failure(_ cursor: inout JSONLineCursor) -> ExchangeRecord.Failure? {
        var kind: ExchangeRecord.Failure.Kind?, location: String?, message: String?
        var side: ExchangeRecord.Failure.Side?, stage: ExchangeRecord.Failure.Stage?
        let ok = object(&cursor) { cursor, key in
            if key.equals("kind") { return put(&kind, enumValue(&cursor, ExchangeRecord.Failure.Kind.self)) }
            if key.equals("where") { return put(&location, cursor.string()) }
            if key.equals("message") { return put(&message, cursor.string()) }
            if key.equals("side") { return put(&side, enumValue(&cursor, ExchangeRecord.Failure.Side.self)) }
            if key.equals("stage") { return put(&stage, enumValue(&cursor, ExchangeRecord.Failure.Stage.self)) }
            return false
        }
        guard ok, let kind, let location, let message else { return nil }
        // The initialiser `init(from:)` uses: side and stage read from `where` when absent.
        return ExchangeRecord.Failure(kind: kind, location: location, message: message, side: side, stage: stage)
    }

    private static func connectionEvent(_ cursor: inout JSONLineCursor) -> RequestlessConnection? {
        var outcome: RequestlessConnection.Outcome?, peer: String?, at: Double?, tlsVersion: String?
        let ok = object(&cursor) { cursor, key in
            if key.equals("outcome") { return put(&outcome, enumValue(&cursor, RequestlessConnection.Outcome.self)) }
            if key.equals("peer") { return put(&peer, cursor.string()) }
            if key.equals("at") { return put(&at, cursor.double()) }
            if key.equals("tlsVersion") { return put(&tlsVersion, cursor.string()) }
            return false
        }
        guard ok, let outcome else { return nil }
        return RequestlessConnection(outcome: outcome, peer: peer, at: at.map(Timestamp.init(millisecondsSince1970:)),
                               tlsVersion: tlsVersion)
    }

    // MARK: Legs

    private static func leg(_ cursor: inout JSONLineCursor) -> ExchangeRecord.Leg? {
        var role: ExchangeRecord.Leg.Role?, connectionID: String?, streamID: Int?, tls: TLSDetails?
        var request: RecordedMessage?, response: RecordedMessage?, interim: [RecordedMessage]?, withheld: [Int]?
        var relayed: RelayedStreams?, translation: String?, broken: String?
        let ok = object(&cursor) { cursor, key in
            if key.equals("role") { return put(&role, enumValue(&cursor, ExchangeRecord.Leg.Role.self)) }
            if key.equals("connectionID") { return put(&connectionID, cursor.string()) }
            if key.equals("request") { return put(&request, message(&cursor)) }
            if key.equals("response") { return put(&response, message(&cursor)) }
            if key.equals("streamID") { return put(&streamID, cursor.int()) }
            if key.equals("tls") { return put(&tls, tlsDetails(&cursor)) }
            if key.equals("interimResponses") { return put(&interim, array(&cursor, message)) }
            if key.equals("interimWithheld") { return put(&withheld, array(&cursor) { $0.int() }) }
            if key.equals("relayed") { return put(&relayed, relayedStreams(&cursor)) }
            if key.equals("translation") { return put(&translation, cursor.string()) }
            if key.equals("broken") { return put(&broken, cursor.string()) }
            return false
        }
        guard ok, let role, let connectionID else { return nil }
        return ExchangeRecord.Leg(role: role, connectionID: connectionID, streamID: streamID, tls: tls, request: request,
                                  response: response, interimResponses: interim, interimWithheld: withheld,
                                  relayed: relayed, translation: translation, broken: broken)
    }

    private static func tlsDetails(_ cursor: inout JSONLineCursor) -> TLSDetails? {
        var version: String?, cipher: String?, sni: String?, sniIssue: String?, alpn: String?
        var peer: String?, subject: String?
        let ok = object(&cursor) { cursor, key in
            if key.equals("version") { return put(&version, cursor.string()) }
            if key.equals("cipher") { return put(&cipher, cursor.string()) }
            if key.equals("sni") { return put(&sni, cursor.string()) }
            if key.equals("sniIssue") { return put(&sniIssue, cursor.string()) }
            if key.equals("alpn") { return put(&alpn, cursor.string()) }
            if key.equals("peerCertificateSHA256") { return put(&peer, cursor.string()) }
            if key.equals("clientCertificateSubject") { return put(&subject, cursor.string()) }
            return false
        }
        guard ok else { return nil }
        return TLSDetails(version: version, cipher: cipher, sni: sni, alpn: alpn, peerCertificateSHA256: peer,
                          clientCertificateSubject: subject, sniIssue: sniIssue)
    }

    private static func relayedStreams(_ cursor: inout JSONLineCursor) -> RelayedStreams? {
        var up: RelayedStreams.Stream?, down: RelayedStreams.Stream?
        let ok = object(&cursor) { cursor, key in
            if key.equals("clientToServer") { return put(&up, relayedStream(&cursor)) }
            if key.equals("serverToClient") { return put(&down, relayedStream(&cursor)) }
            return false
        }
        guard ok, let up, let down else { return nil }
        return RelayedStreams(clientToServer: up, serverToClient: down)
    }

    private static func relayedStream(_ cursor: inout JSONLineCursor) -> RelayedStreams.Stream? {
        var bytes: Int?, sha256: SHA256Digest?
        let ok = object(&cursor) { cursor, key in
            if key.equals("bytes") { return put(&bytes, cursor.int()) }
            if key.equals("sha256") { return put(&sha256, cursor.digest()) }
            return false
        }
        guard ok, let bytes, let sha256 else { return nil }
        return RelayedStreams.Stream(bytes: bytes, sha256: sha256)
    }

    // MARK: Messages

    private static func message(_ cursor: inout JSONLineCursor) -> RecordedMessage? {
        var method: String?, scheme: String?, authority: String?, path: String?, targetForm: RequestTargetForm?
        var connectProtocol: String?, status: Int?, reason: String?, version: HTTPVersion?, fields: [RecordedField]?
        var trailers: [RecordedField]?, digest: MessageDigest?, body: StoredBody?, complete: Bool?
        var timings: MessageTimings?
        let ok = object(&cursor) { cursor, key in
            if key.equals("method") { return put(&method, cursor.string()) }
            if key.equals("scheme") { return put(&scheme, cursor.string()) }
            if key.equals("authority") { return put(&authority, cursor.string()) }
            if key.equals("path") { return put(&path, cursor.string()) }
            if key.equals("targetForm") { return put(&targetForm, enumValue(&cursor, RequestTargetForm.self)) }
            if key.equals("status") { return put(&status, cursor.int()) }
            if key.equals("reason") { return put(&reason, cursor.string()) }
            if key.equals("version") { return put(&version, enumValue(&cursor, HTTPVersion.self)) }
            if key.equals("fields") { return put(&fields, array(&cursor, field)) }
            if key.equals("digest") { return put(&digest, messageDigest(&cursor)) }
            if key.equals("complete") { return put(&complete, cursor.bool()) }
            if key.equals("timings") { return put(&timings, messageTimings(&cursor)) }
            if key.equals("trailers") { return put(&trailers, array(&cursor, field)) }
            if key.equals("connectProtocol") { return put(&connectProtocol, cursor.string()) }
            if key.equals("body") { return put(&body, storedBody(&cursor)) }
            return false
        }
        guard ok, let version, let fields, let digest, let complete, let timings else { return nil }
        return RecordedMessage(method: method, scheme: scheme, authority: authority, path: path, targetForm: targetForm,
                               connectProtocol: connectProtocol, status: status, reason: reason, version: version,
                               fields: fields, trailers: trailers, digest: digest, body: body, complete: complete,
                               timings: timings)
    }

    private static func field(_ cursor: inout JSONLineCursor) -> RecordedField? {
        var name: String?, value: String?, redacted: Bool?, cookies: [CookieParts]?
        let ok = object(&cursor) { cursor, key in
            if key.equals("name") { return put(&name, cursor.string()) }
            if key.equals("value") { return put(&value, cursor.string()) }
            if key.equals("redacted") { return put(&redacted, cursor.bool()) }
            if key.equals("cookies") { return put(&cookies, array(&cursor, cookie)) }
            return false
        }
        guard ok, let name, let value else { return nil }
        var field = RecordedField(name: name, value: value, cookies: cookies)
        field.redacted = redacted  // as decoded, `false` included (the initialiser keeps only `true`)
        return field
    }

    private static func cookie(_ cursor: inout JSONLineCursor) -> CookieParts? {
        var name: String?, value: String?, attributes: [String]?, opaque: Bool?
        let ok = object(&cursor) { cursor, key in
            if key.equals("name") { return put(&name, cursor.string()) }
            if key.equals("value") { return put(&value, cursor.string()) }
            if key.equals("attributes") { return put(&attributes, strings(&cursor)) }
            if key.equals("opaque") { return put(&opaque, cursor.bool()) }
            return false
        }
        guard ok, let name, let value, let attributes else { return nil }
        var parts = CookieParts(name: name, value: value, attributes: attributes)
        parts.opaque = opaque  // as decoded, `false` included
        return parts
    }

    private static func storedBody(_ cursor: inout JSONLineCursor) -> StoredBody? {
        var base64: String?, truncated: Bool?
        let ok = object(&cursor) { cursor, key in
            if key.equals("base64") { return put(&base64, cursor.string()) }
            if key.equals("truncated") { return put(&truncated, cursor.bool()) }
            return false
        }
        guard ok, let base64, let truncated else { return nil }
        return StoredBody(base64: base64, truncated: truncated)
    }

    private static func messageTimings(_ cursor: inout JSONLineCursor) -> MessageTimings? {
        var start: Double?, headersDone: Double?, end: Double?
        let ok = object(&cursor) { cursor, key in
            if key.equals("start") { return put(&start, cursor.double()) }
            if key.equals("headersDone") { return put(&headersDone, cursor.double()) }
            if key.equals("end") { return put(&end, cursor.double()) }
            return false
        }
        guard ok else { return nil }
        return MessageTimings(start: start.map(Timestamp.init(millisecondsSince1970:)),
                              headersDone: headersDone.map(Timestamp.init(millisecondsSince1970:)),
                              end: end.map(Timestamp.init(millisecondsSince1970:)))
    }

    // MARK: Digests

    /// A head digest whose every member is then set from the line (the type
    /// has no memberwise initialiser outside its module; all its members are
    /// public and settable).
    private static let placeholderHead = HeadDigest(response: HTTPResponseHead(status: 200), wire: .http1(head: []),
                                                    using: .sha256)

    /// A trailers digest whose every member is then set from the line.
    private static let placeholderTrailers = BodyDigest.TrailersDigest(HTTPFields([HTTPField(name: "x", value: "")]),
                                                                       using: .sha256)!

    private static func messageDigest(_ cursor: inout JSONLineCursor) -> MessageDigest? {
        var head: HeadDigest?, body: BodyDigest?
        let ok = object(&cursor) { cursor, key in
            if key.equals("head") { return put(&head, headDigest(&cursor)) }
            if key.equals("body") { return put(&body, bodyDigest(&cursor)) }
            return false
        }
        guard ok, let head, let body else { return nil }
        return MessageDigest(head: head, body: body)
    }

    private static func headDigest(_ cursor: inout JSONLineCursor) -> HeadDigest? {
        var exact: SHA256Digest?, semantic: SHA256Digest?, fields: FieldDigests?, fieldNames: [String]?
        var hopByHop: [String]?, version: HTTPVersion?, wireLength: Int?, method: String?, target: SHA256Digest?
        var targetForm: RequestTargetForm?, status: Int?, reasonPhrase: String?
        var pseudoFieldOrder: HTTP2PseudoFieldOrder?
        let ok = object(&cursor) { cursor, key in
            if key.equals("exact") { return put(&exact, cursor.digest()) }
            if key.equals("semantic") { return put(&semantic, cursor.digest()) }
            if key.equals("fields") { return put(&fields, fieldDigests(&cursor)) }
            if key.equals("fieldNames") { return put(&fieldNames, strings(&cursor)) }
            if key.equals("hopByHop") { return put(&hopByHop, strings(&cursor)) }
            if key.equals("version") { return put(&version, enumValue(&cursor, HTTPVersion.self)) }
            if key.equals("wireLength") { return put(&wireLength, cursor.int()) }
            if key.equals("method") { return put(&method, cursor.string()) }
            if key.equals("target") { return put(&target, cursor.digest()) }
            if key.equals("targetForm") { return put(&targetForm, enumValue(&cursor, RequestTargetForm.self)) }
            if key.equals("status") { return put(&status, cursor.int()) }
            if key.equals("reasonPhrase") { return put(&reasonPhrase, cursor.string()) }
            if key.equals("pseudoFieldOrder") { return put(&pseudoFieldOrder, pseudoFields(&cursor)) }
            return false
        }
        guard ok, let exact, let semantic, let fields, let fieldNames, let hopByHop, let version,
              let wireLength else { return nil }
        var digest = placeholderHead
        digest.exact = exact
        digest.semantic = semantic
        digest.fields = fields
        digest.fieldNames = fieldNames
        digest.hopByHop = hopByHop
        digest.version = version
        digest.wireLength = wireLength
        digest.method = method
        digest.target = target
        digest.targetForm = targetForm
        digest.status = status
        digest.reasonPhrase = reasonPhrase
        digest.pseudoFieldOrder = pseudoFieldOrder
        return digest
    }

    /// A pseudo-field order; nil (the general parser then names what is
    /// wrong) for an unknown or repeated name, or an empty list.
    private static func pseudoFields(_ cursor: inout JSONLineCursor) -> HTTP2PseudoFieldOrder? {
        guard let names = array(&cursor, { cursor in cursor.string().flatMap(HTTP2PseudoFieldOrder.Name.init(fieldName:)) }) else {
            return nil
        }
        return HTTP2PseudoFieldOrder(names)
    }

    private static func fieldDigests(_ cursor: inout JSONLineCursor) -> FieldDigests? {
        var digests = FieldDigests()
        var count = 0
        let ok = object(&cursor) { cursor, key in
            guard let name = String(validating: key, as: UTF8.self), let digest = cursor.digest() else { return false }
            digests[name] = digest
            count += 1
            return true
        }
        // A name given twice: `JSONDecoder`'s dictionary decides, not this.
        guard ok, digests.count == count else { return nil }
        return digests
    }

    private static func bodyDigest(_ cursor: inout JSONLineCursor) -> BodyDigest? {
        var length: Int?, sha256: SHA256Digest?, trailers: BodyDigest.TrailersDigest?
        let ok = object(&cursor) { cursor, key in
            if key.equals("length") { return put(&length, cursor.int()) }
            if key.equals("sha256") { return put(&sha256, cursor.digest()) }
            if key.equals("trailers") { return put(&trailers, trailersDigest(&cursor)) }
            return false
        }
        guard ok, let length, let sha256 else { return nil }
        return BodyDigest(length: length, sha256: sha256, trailers: trailers)
    }

    private static func trailersDigest(_ cursor: inout JSONLineCursor) -> BodyDigest.TrailersDigest? {
        var exact: SHA256Digest?, semantic: SHA256Digest?, fieldNames: [String]?
        let ok = object(&cursor) { cursor, key in
            if key.equals("exact") { return put(&exact, cursor.digest()) }
            if key.equals("semantic") { return put(&semantic, cursor.digest()) }
            if key.equals("fieldNames") { return put(&fieldNames, strings(&cursor)) }
            return false
        }
        guard ok, let exact, let semantic, let fieldNames else { return nil }
        var digest = placeholderTrailers
        digest.exact = exact
        digest.semantic = semantic
        digest.fieldNames = fieldNames
        return digest
    }
}
