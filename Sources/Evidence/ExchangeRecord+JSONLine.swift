import Codecs
import HTTP

/// The recording line of an exchange record, written with `JSONWriter`
/// instead of `JSONEncoder`: the same members as the `Codable` conformances
/// (which `RecordingReader` decodes with), `"type":"exchange"` first, absent
/// optionals left out. `ExchangeRecordLineTests` round-trips every kind of
/// record through both encoders; a stored property added to any of these
/// types must be written here too.
extension ExchangeRecord {
    /// The record as one recording line, `\n` included.
    public func jsonLine() -> [UInt8] {
        lineWriter().bytes
    }

    /// A writer holding the record's line, `\n` included: what
    /// `RecordingWriter` appends to its batch without an array in between.
    public func lineWriter() -> JSONWriter {
        // A two-leg record of a small exchange is about 5 KiB: one allocation.
        var json = JSONWriter(capacity: 2048 + legs.count * 3072)
        writeLine(to: &json)
        return json
    }

    /// Appends the record's line, `\n` included, to `json`, which holds
    /// whole lines only (or nothing): how a batch of lines is built in one
    /// reused buffer.
    ///
    /// Invariant of the walk: it has no closures and no generic thunks
    /// (containers are opened and closed around their members; optionals
    /// are unwrapped in place), messages are written by methods kept out
    /// of line that get them by address (the legs' are inlined: see
    /// `Leg.write`), and everything it calls
    /// is `@_effects(releasenone)` and releases nothing its caller holds
    /// (only temporaries of its own, such as an enum's `rawValue`). A writer
    /// added to the walk must keep that promise; why, and what it bought:
    /// Docs/performance.md#the-recording-line (`make microbench` shows a
    /// break).
    public func writeLine(to json: inout JSONWriter) {
        writeLine(to: &json, repeatingValues: true)
    }

    /// `repeatingValues: false` writes every value afresh: the same bytes,
    /// what the tests compare the copies with.
    func writeLine(to json: inout JSONWriter, repeatingValues: Bool) {
        json.openObject()
        json.member("type", literal: RecordingFormat.LineType.exchange.literal)
        json.member("exchangeID", exchangeID)
        json.member("traceID", ifPresent: traceID)
        json.member("tap", tap)
        json.key("legs")
        json.openArray()
        // The second leg repeats what the first carried unchanged (the
        // response's fields and their digests, forwarded as they came): its
        // bytes are copied from the first leg's instead of written again.
        // The legs are read in the array's buffer: the array's subscript
        // copies a whole leg out to call a method on it.
        legs.withUnsafeBufferPointer { legs in
            var repeats = repeatingValues && legs.count >= 2 ? legs[0].repeats(in: legs[1]) : LegRepeats()
            for index in legs.indices {
                if index < 2 {
                    legs[index].write(to: &json, repeating: &repeats)
                } else {
                    var none = LegRepeats()
                    legs[index].write(to: &json, repeating: &none)
                }
            }
        }
        json.closeArray()
        json.member("authFlowStep", ifPresent: authFlowStep)
        json.key("faults")
        json.openArray()
        for index in faults.indices {
            json.openObject()
            json.member("name", faults[index].name)
            json.member("detail", ifPresent: faults[index].detail)
            json.closeObject()
        }
        json.closeArray()
        json.member("error", ifPresent: error)
        json.member("retries", ifPresent: retries)
        if let connection {
            json.key("connection")
            json.openObject()
            json.member("outcome", connection.outcome.rawValue)
            json.member("peer", ifPresent: connection.peer)
            if let at = connection.at {
                json.key("at")
                json.double(at.millisecondsSince1970)
            }
            json.member("tlsVersion", ifPresent: connection.tlsVersion)
            json.member("received", ifPresent: connection.received)
            json.closeObject()
        }
        json.closeObject()
        json.endLine()
    }
}

/// A part of a record that writes itself as one JSON value.
protocol RecordLinePart {
    func write(to json: inout JSONWriter)
}

extension JSONWriter {
    /// `part` under `name`; the member left out when `part` is nil. Always
    /// inlined: as a generic function of its own it would take `part` as a
    /// copy (retaining what it holds) to pass it on.
    @inline(__always)
    mutating func member(_ name: StaticString, ifPresent part: (some RecordLinePart)?) {
        if let part {
            key(name)
            part.write(to: &self)
        }
    }

    /// `parts` as an array under `name`; the member left out when nil.
    @inline(__always)
    mutating func member(_ name: StaticString, ifPresent parts: [some RecordLinePart]?) {
        if let parts {
            key(name)
            openArray()
            for index in parts.indices { parts[index].write(to: &self) }
            closeArray()
        }
    }
}

extension ExchangeRecord.Failure: RecordLinePart {
    @_effects(releasenone)
    func write(to json: inout JSONWriter) {
        json.openObject()
        json.member("kind", kind.rawValue)
        json.member("where", location)
        json.member("message", message)
        json.member("side", ifPresent: side?.rawValue)
        json.member("stage", ifPresent: stage?.rawValue)
        json.closeObject()
    }
}

/// The values of a leg's messages that the next leg of the same line
/// writes again (`JSONRepeat`): the first leg notes where it wrote them,
/// the second copies them.
struct LegRepeats {
    var request = MessageRepeats()
    var response = MessageRepeats()
}

/// The values of one message that a message of the next leg repeats.
struct MessageRepeats {
    var fields = JSONRepeat.off
    var head = HeadDigestRepeats()

    init() {}

    /// The parts of a message that its counterpart in the next leg writes
    /// as the same bytes (nil: the message or its counterpart is absent).
    /// Its parameters are borrowed: `Leg.repeats` is `releasenone`, and an
    /// initialiser's parameters are otherwise consumed (released) by it.
    @inline(__always)
    init(fields: borrowing [RecordedField]?, _ laterFields: borrowing [RecordedField]?,
         fieldDigests: borrowing FieldDigests?, _ laterFieldDigests: borrowing FieldDigests?,
         fieldNames: borrowing [String]?, _ laterFieldNames: borrowing [String]?) {
        if let fields = copy fields, let laterFields = copy laterFields, !fields.isEmpty,
           RecordedField.writeSameBytes(fields, laterFields) {
            self.fields = .wanted
        }
        if let digests = copy fieldDigests, let laterDigests = copy laterFieldDigests,
           let names = copy fieldNames, let laterNames = copy laterFieldNames {
            head = HeadDigestRepeats(fields: digests, laterDigests, fieldNames: names, laterNames)
        }
    }
}

extension ExchangeRecord.Leg {
    /// What `later`, written right after this leg in the same line, writes
    /// as the same bytes as this one (each message with its counterpart).
    /// (The parts are compared as read through optional chains, one array
    /// at a time: binding a whole message would copy it. Inlined into
    /// `writeLine`: out of line, both legs were copied to be lent to it.)
    @inline(__always)
    func repeats(in later: ExchangeRecord.Leg) -> LegRepeats {
        LegRepeats(
            request: MessageRepeats(fields: request?.fields, later.request?.fields,
                                    fieldDigests: request?.digest.head.fields, later.request?.digest.head.fields,
                                    fieldNames: request?.digest.head.fieldNames, later.request?.digest.head.fieldNames),
            response: MessageRepeats(fields: response?.fields, later.response?.fields,
                                     fieldDigests: response?.digest.head.fields, later.response?.digest.head.fields,
                                     fieldNames: response?.digest.head.fieldNames,
                                     later.response?.digest.head.fieldNames))
    }

    /// Inlined into `writeLine`, which reads the legs in their array's
    /// buffer: out of line, each leg (1.3 KiB) was copied to the stack to
    /// be lent to it. Its messages are written out of line.
    @inline(__always)
    func write(to json: inout JSONWriter, repeating repeats: inout LegRepeats) {
        json.openObject()
        json.member("role", literal: role.literal)
        json.member("connectionID", connectionID)
        json.member("streamID", ifPresent: streamID)
        tls?.write(member: "tls", to: &json)
        // Through optional chains, which lend the message in place (`if let`
        // copies it out of the optional, `!= nil` too).
        request?.write(member: "request", to: &json, repeating: &repeats.request)
        response?.write(member: "response", to: &json, repeating: &repeats.response)
        json.member("interimResponses", ifPresent: interimResponses)
        if let interimWithheld {
            json.key("interimWithheld")
            json.array(interimWithheld)
        }
        if let relayed {
            json.key("relayed")
            json.openObject()
            json.key("clientToServer")
            relayed.clientToServer.write(to: &json)
            json.key("serverToClient")
            relayed.serverToClient.write(to: &json)
            json.closeObject()
        }
        json.member("translation", ifPresent: translation)
        json.member("broken", ifPresent: broken)
        json.closeObject()
    }
}

extension RelayedStreams.Stream {
    func write(to json: inout JSONWriter) {
        json.openObject()
        json.member("bytes", bytes)
        json.key("sha256")
        json.hex(sha256)
        json.closeObject()
    }
}

extension TLSDetails: RecordLinePart {
    /// The details as the member `name` (called through an optional chain,
    /// which lends them in place).
    func write(member name: StaticString, to json: inout JSONWriter) {
        json.key(name)
        write(to: &json)
    }

    func write(to json: inout JSONWriter) {
        json.openObject()
        json.member("version", ifPresent: version)
        json.member("cipher", ifPresent: cipher)
        json.member("sni", ifPresent: sni)
        json.member("sniIssue", ifPresent: sniIssue)
        json.member("alpn", ifPresent: alpn)
        json.member("peerCertificateSHA256", ifPresent: peerCertificateSHA256)
        json.member("clientCertificateSubject", ifPresent: clientCertificateSubject)
        json.closeObject()
    }
}

extension RecordedMessage: RecordLinePart {
    /// Out of line, so that `self` is lent by address (see `writeLine`).
    @inline(never) @_effects(releasenone)
    func write(to json: inout JSONWriter) {
        var none = MessageRepeats()
        write(to: &json, repeating: &none)
    }

    /// The message as the member `name`, its repeated values copied or noted.
    @inline(never) @_effects(releasenone)
    func write(member name: StaticString, to json: inout JSONWriter, repeating repeats: inout MessageRepeats) {
        json.key(name)
        write(to: &json, repeating: &repeats)
    }

    /// The message, its repeated values copied or noted (`MessageRepeats`).
    @inline(never) @_effects(releasenone)
    func write(to json: inout JSONWriter, repeating repeats: inout MessageRepeats) {
        json.openObject()
        json.member("method", ifPresent: method)
        json.member("scheme", ifPresent: scheme)
        json.member("authority", ifPresent: authority)
        json.member("path", ifPresent: path)
        if let targetForm { json.member("targetForm", literal: targetForm.literal) }
        json.member("connectProtocol", ifPresent: connectProtocol)
        json.member("status", ifPresent: status)
        json.member("reason", ifPresent: reason)
        json.member("version", literal: version.literal)
        json.key("fields")
        if !json.repeatValue(repeats.fields) {
            let start = json.valueStart
            RecordedField.write(fields, to: &json)
            json.note(&repeats.fields, from: start)
        }
        if let trailers {
            json.key("trailers")
            RecordedField.write(trailers, to: &json)
        }
        json.key("digest")
        digest.write(to: &json, repeating: &repeats.head)
        if let body {
            json.key("body")
            json.openObject()
            json.member("base64", body.base64)
            json.member("truncated", body.truncated)
            json.closeObject()
        }
        json.member("complete", complete)
        json.key("timings")
        timings.write(to: &json)
        json.closeObject()
    }
}

extension MessageTimings {
    /// The instants; one equal to the one before it (the head's start and
    /// end are one instant, and so is the whole of a message without a
    /// body) is copied from that one's bytes instead of written again.
    @inline(__always)
    func write(to json: inout JSONWriter) {
        json.openObject()
        var previous = JSONRepeat.off
        var previousBits: UInt64? = nil
        if let start {
            json.key("start")
            MessageTimings.write(start, to: &json, after: &previous, previousBits: &previousBits)
        }
        if let headersDone {
            json.key("headersDone")
            MessageTimings.write(headersDone, to: &json, after: &previous, previousBits: &previousBits)
        }
        if let end {
            json.key("end")
            MessageTimings.write(end, to: &json, after: &previous, previousBits: &previousBits)
        }
        json.closeObject()
    }

    /// One instant: copied when it has the bits of the instant written
    /// before it (the same double, so the same bytes), else written and noted.
    @inline(__always)
    private static func write(_ instant: Timestamp, to json: inout JSONWriter, after previous: inout JSONRepeat,
                              previousBits: inout UInt64?) {
        let bits = instant.millisecondsSince1970.bitPattern
        if bits == previousBits, json.repeatValue(previous) { return }
        previous = .wanted
        previousBits = bits
        let start = json.valueStart
        json.double(instant.millisecondsSince1970)
        json.note(&previous, from: start)
    }
}

extension RecordedField {
    /// True when the two field lists are written as the same bytes (names,
    /// values, cookie parts: the same bytes, not merely `==`).
    @_effects(releasenone)
    static func writeSameBytes(_ a: [RecordedField], _ b: [RecordedField]) -> Bool {
        guard a.count == b.count else { return false }
        // One list recorded once for both legs (a head forwarded as it came).
        if JSONWriter.sameStorage(a, b) { return true }
        for index in a.indices where !a[index].writesSameBytes(as: b[index]) { return false }
        return true
    }

    @inline(__always)
    private func writesSameBytes(as other: RecordedField) -> Bool {
        guard redacted == other.redacted, JSONWriter.sameBytes(name, other.name),
              JSONWriter.sameBytes(value, other.value) else { return false }
        switch (cookies, other.cookies) {
        case (nil, nil): return true
        case let (mine?, theirs?):
            guard mine.count == theirs.count else { return false }
            for index in mine.indices where !mine[index].writesSameBytes(as: theirs[index]) { return false }
            return true
        default: return false
        }
    }

    static func write(_ fields: [RecordedField], to json: inout JSONWriter) {
        json.openArray()
        for index in fields.indices { fields[index].write(to: &json) }
        json.closeArray()
    }

    @inline(__always)
    func write(to json: inout JSONWriter) {
        json.openObject()
        json.member("name", name)
        json.member("value", value)
        if let redacted { json.member("redacted", redacted) }
        if let cookies {
            json.key("cookies")
            json.openArray()
            for index in cookies.indices { cookies[index].write(to: &json) }
            json.closeArray()
        }
        json.closeObject()
    }
}

extension CookieParts {
    /// True when `other` is written as the same bytes.
    func writesSameBytes(as other: CookieParts) -> Bool {
        opaque == other.opaque && JSONWriter.sameBytes(name, other.name) && JSONWriter.sameBytes(value, other.value)
            && JSONWriter.sameBytes(attributes, other.attributes)
    }

    @inline(__always)
    func write(to json: inout JSONWriter) {
        json.openObject()
        json.member("name", name)
        json.member("value", value)
        json.key("attributes")
        json.array(attributes)
        if let opaque { json.member("opaque", opaque) }
        json.closeObject()
    }
}

extension ExchangeRecord.Leg.Role {
    /// `rawValue` as a literal (`JSONWriter.literal`).
    var literal: StaticString {
        switch self {
        case .downstream: "downstream"
        case .upstream: "upstream"
        case .client: "client"
        case .server: "server"
        }
    }
}

extension RecordingFormat.LineType {
    /// `rawValue` as a literal (`JSONWriter.literal`).
    var literal: StaticString {
        switch self {
        case .header: "header"
        case .exchange: "exchange"
        }
    }
}
