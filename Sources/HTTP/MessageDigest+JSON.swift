/// The recording-line encoding of the digests (`JSONWriter`), member for
/// member what their `Codable` conformance writes, so `JSONDecoder` reads
/// them back equal. Keep these beside the types: a stored property added to
/// a digest must be added here too (the Evidence round-trip tests fail
/// otherwise).
extension MessageDigest {
    /// Not inlined, so that `self` is lent by address: no part of the
    /// digest is copied to be written (see `ExchangeRecord.writeLine`).
    @_effects(releasenone)
    @inline(never)
    public func write(to json: inout JSONWriter) {
        json.openObject()
        json.key("head")
        head.write(to: &json)
        json.key("body")
        body.write(to: &json)
        json.closeObject()
    }
}

extension HeadDigest {
    @_effects(releasenone)
    @inline(never)
    public func write(to json: inout JSONWriter) {
        json.openObject()
        json.key("exact")
        json.hex(exact)
        json.key("semantic")
        json.hex(semantic)
        json.key("fields")
        fields.write(to: &json)
        json.key("fieldNames")
        json.array(fieldNames)
        json.key("hopByHop")
        json.array(hopByHop)
        json.member("version", version.rawValue)
        json.member("wireLength", wireLength)
        json.member("method", ifPresent: method)
        if let target {
            json.key("target")
            json.hex(target)
        }
        json.member("targetForm", ifPresent: targetForm?.rawValue)
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
    /// The object of name → digest, in name order (so a line is the same
    /// bytes for the same head).
    func write(to json: inout JSONWriter) {
        json.openObject()
        for index in entries.indices {
            json.key(escaping: entries[index].key)
            json.hex(entries[index].value)
        }
        json.closeObject()
    }
}
