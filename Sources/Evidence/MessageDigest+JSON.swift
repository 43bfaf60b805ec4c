import Codecs
import HTTP

/// The recording-line encoding of the digests (`JSONWriter`), member for
/// member what their `Codable` conformance writes, so `JSONDecoder` reads
/// them back equal. Keep these beside the types: a stored property added to
/// a digest must be added here too (the Evidence round-trip tests fail
/// otherwise).
extension MessageDigest {
    /// The digest, its head's repeated parts copied or noted (`HeadDigestRepeats`).
    /// Not inlined, so that `self` is lent by address: no part of the
    /// digest is copied to be written (see `ExchangeRecord.writeLine`).
    @_effects(releasenone)
    @inline(never)
    public func write(to json: inout JSONWriter, repeating repeats: inout HeadDigestRepeats) {
        json.openObject()
        json.key("head")
        head.write(to: &json, repeating: &repeats)
        json.key("body")
        body.write(to: &json)
        json.closeObject()
    }
}

/// The parts of a head digest that one line writes twice: the field
/// digests and field names of a head forwarded unchanged, which the records
/// of both legs carry (`JSONRepeat`).
public struct HeadDigestRepeats: Sendable {
    public var fields = JSONRepeat.off
    public var fieldNames = JSONRepeat.off

    public init() {}

    /// The parts a head digest with these field digests and names shares
    /// with a later one (written after it in the same line) that has
    /// `laterFields` and `laterFieldNames`: each is written once and copied
    /// the second time.
    @_effects(releasenone)
    public init(fields: borrowing FieldDigests, _ laterFields: borrowing FieldDigests,
                fieldNames: borrowing [String], _ laterFieldNames: borrowing [String]) {
        if !fields.isEmpty, fields.writesSameBytes(as: laterFields) { self.fields = .wanted }
        if !fieldNames.isEmpty, JSONWriter.sameBytes(fieldNames, laterFieldNames) { self.fieldNames = .wanted }
    }
}

extension HeadDigest {
    @_effects(releasenone)
    @inline(never)
    public func write(to json: inout JSONWriter, repeating repeats: inout HeadDigestRepeats) {
        json.openObject()
        json.key("exact")
        json.hex(exact)
        json.key("semantic")
        json.hex(semantic)
        json.key("fields")
        if !json.repeatValue(repeats.fields) {
            let start = json.valueStart
            fields.write(to: &json)
            json.note(&repeats.fields, from: start)
        }
        json.key("fieldNames")
        if !json.repeatValue(repeats.fieldNames) {
            let start = json.valueStart
            json.array(fieldNames)
            json.note(&repeats.fieldNames, from: start)
        }
        json.key("hopByHop")
        json.array(hopByHop)
        json.member("version", literal: version.literal)
        json.member("wireLength", wireLength)
        json.member("method", ifPresent: method)
        if let target {
            json.key("target")
            json.hex(target)
        }
        if let targetForm { json.member("targetForm", literal: targetForm.literal) }
        if let pseudoFieldOrder {
            json.key("pseudoFieldOrder")
            json.openArray()
            pseudoFieldOrder.forEach { json.literal($0.fieldName) }
            json.closeArray()
        }
        json.member("status", ifPresent: status)
        json.member("reasonPhrase", ifPresent: reasonPhrase)
        json.closeObject()
    }
}

extension BodyDigest {
    @_effects(releasenone)
    public func write(to json: inout JSONWriter) {
        json.openObject()
        json.member("length", length)
        json.key("sha256")
        json.hex(sha256)
        if let trailers {
            json.key("trailers")
            json.openObject()
            json.key("exact")
            json.hex(trailers.exact)
            json.key("semantic")
            json.hex(trailers.semantic)
            json.key("fieldNames")
            json.array(trailers.fieldNames)
            json.closeObject()
        }
        json.closeObject()
    }
}

extension FieldDigests {
    /// True when `other` is written as the same bytes: the same names (same
    /// bytes) with the same digests, in the same order.
    func writesSameBytes(as other: FieldDigests) -> Bool {
        guard count == other.count else { return false }
        if sharesStorage(with: other) { return true }
        return elementsEqual(other) { $0.value == $1.value && JSONWriter.sameBytes($0.key, $1.key) }
    }

    /// True when `self` and `other` are the same bits: the one array of
    /// entries they hold (one word) is one storage (the memo's digests of a
    /// field section, shared by the heads that carry it), so the same
    /// entries. Different bits, or a layout of more than one word, say nothing.
    private func sharesStorage(with other: FieldDigests) -> Bool {
        withUnsafeBytes(of: self) { mine in
            withUnsafeBytes(of: other) { theirs in
                mine.count == 8 && mine.loadUnaligned(as: UInt64.self) == theirs.loadUnaligned(as: UInt64.self)
            }
        }
    }

    /// The object of name → digest, in name order (so a line is the same
    /// bytes for the same head).
    func write(to json: inout JSONWriter) {
        json.openObject()
        for (name, digest) in self {
            json.key(escaping: name)
            json.hex(digest)
        }
        json.closeObject()
    }
}

extension HTTPVersion {
    /// `rawValue` as a literal, which a recording line writes without a
    /// call (`JSONWriter.literal`).
    public var literal: StaticString {
        switch self {
        case .http1_0: "HTTP/1.0"
        case .http1_1: "HTTP/1.1"
        case .http2: "HTTP/2"
        }
    }
}

extension RequestTargetForm {
    /// `rawValue` as a literal (`JSONWriter.literal`).
    public var literal: StaticString {
        switch self {
        case .origin: "origin"
        case .absolute: "absolute"
        case .authority: "authority"
        case .asterisk: "asterisk"
        }
    }
}
