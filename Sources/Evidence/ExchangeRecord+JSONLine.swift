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
    /// The walk retains nothing it reads (a copy of a leg or a field would
    /// retain and release every string it holds): it has no closures and no
    /// generic thunks (containers are opened and closed around their
    /// members; optionals are unwrapped in place by always-inlined members);
    /// legs and messages are written by methods kept out of line, which get
    /// them by address; and what it calls releases nothing its caller holds
    /// (the writers in other modules and the out-of-line ones here are
    /// `@_effects(releasenone)`: they release only temporaries of their own,
    /// such as an enum's `rawValue`), so the optimizer need not retain a
    /// leg, a field or a name around the call that writes it. A writer added
    /// to the walk must keep that promise, or the walk goes back to copying
    /// (`make microbench` shows it).
    public func writeLine(to json: inout JSONWriter) {
        json.openObject()
        json.member("type", RecordingFormat.LineType.exchange.rawValue)
        json.member("exchangeID", exchangeID)
        json.member("traceID", ifPresent: traceID)
        json.member("tap", tap)
        json.key("legs")
        json.openArray()
        for index in legs.indices { legs[index].write(to: &json) }
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

extension ExchangeRecord.Leg {
    /// Out of line, so that `self` is lent by address (see `writeLine`).
    @inline(never) @_effects(releasenone)
    func write(to json: inout JSONWriter) {
        json.openObject()
        json.member("role", role.rawValue)
        json.member("connectionID", connectionID)
        json.member("streamID", ifPresent: streamID)
        json.member("tls", ifPresent: tls)
        json.member("request", ifPresent: request)
        json.member("response", ifPresent: response)
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
        json.openObject()
        json.member("method", ifPresent: method)
        json.member("scheme", ifPresent: scheme)
        json.member("authority", ifPresent: authority)
        json.member("path", ifPresent: path)
        json.member("targetForm", ifPresent: targetForm?.rawValue)
        json.member("connectProtocol", ifPresent: connectProtocol)
        json.member("status", ifPresent: status)
        json.member("reason", ifPresent: reason)
        json.member("version", version.rawValue)
        json.key("fields")
        RecordedField.write(fields, to: &json)
        if let trailers {
            json.key("trailers")
            RecordedField.write(trailers, to: &json)
        }
        json.key("digest")
        digest.write(to: &json)
        if let body {
            json.key("body")
            json.openObject()
            json.member("base64", body.base64)
            json.member("truncated", body.truncated)
            json.closeObject()
        }
        json.member("complete", complete)
        json.key("timings")
        json.openObject()
        if let start = timings.start {
            json.key("start")
            json.double(start.millisecondsSince1970)
        }
        if let headersDone = timings.headersDone {
            json.key("headersDone")
            json.double(headersDone.millisecondsSince1970)
        }
        if let end = timings.end {
            json.key("end")
            json.double(end.millisecondsSince1970)
        }
        json.closeObject()
        json.closeObject()
    }
}

extension RecordedField {
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
