/// The recording-line encoding of the digests (`JSONWriter`), member for
/// member what their `Codable` conformance writes, so `JSONDecoder` reads
/// them back equal. Keep these beside the types: a stored property added to
/// a digest must be added here too (the Evidence round-trip tests fail
/// otherwise).
extension MessageDigest {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("head")
            head.write(to: &json)
            json.key("body")
            body.write(to: &json)
        }
    }
}

extension HeadDigest {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("exact")
            json.hex(exact)
            json.key("semantic")
            json.hex(semantic)
            json.key("fields")
            json.object { json in
                // In name order (`FieldDigests`), so a line is the same bytes for the same head.
                for (name, digest) in fields {
                    json.key(escaping: name)
                    json.hex(digest)
                }
            }
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
        }
    }
}

extension BodyDigest {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("length", length)
            json.key("sha256")
            json.hex(sha256)
            if let trailers {
                json.key("trailers")
                json.object { json in
                    json.key("exact")
                    json.hex(trailers.exact)
                    json.key("semantic")
                    json.hex(trailers.semantic)
                    json.key("fieldNames")
                    json.array(trailers.fieldNames)
                }
            }
        }
    }
}
