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
    public func writeLine(to json: inout JSONWriter) {
        json.object { json in
            json.member("type", RecordingFormat.LineType.exchange.rawValue)
            writeMembers(to: &json)
        }
        json.endLine()
    }

    private func writeMembers(to json: inout JSONWriter) {
        json.member("exchangeID", exchangeID)
        json.member("traceID", ifPresent: traceID)
        json.member("tap", tap)
        json.key("legs")
        json.array { json in
            for leg in legs { leg.write(to: &json) }
        }
        json.member("authFlowStep", ifPresent: authFlowStep)
        json.key("faults")
        json.array { json in
            for fault in faults {
                json.object { json in
                    json.member("name", fault.name)
                    json.member("detail", ifPresent: fault.detail)
                }
            }
        }
        json.member("error", ifPresent: error)
        json.member("retries", ifPresent: retries)
        if let connection {
            json.key("connection")
            json.object { json in
                json.member("outcome", connection.outcome.rawValue)
                json.member("peer", ifPresent: connection.peer)
                if let at = connection.at {
                    json.key("at")
                    json.double(at.millisecondsSince1970)
                }
                json.member("tlsVersion", ifPresent: connection.tlsVersion)
            }
        }
    }
}

extension ExchangeRecord.Failure: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("kind", kind.rawValue)
            json.member("where", location)
            json.member("message", message)
            json.member("side", ifPresent: side?.rawValue)
            json.member("stage", ifPresent: stage?.rawValue)
        }
    }
}

extension ExchangeRecord.Leg: JSONWritable {
    @inline(__always)
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("role", role.rawValue)
            json.member("connectionID", connectionID)
            json.member("streamID", ifPresent: streamID)
            json.member("tls", ifPresent: tls)
            json.member("request", ifPresent: request)
            json.member("response", ifPresent: response)
            json.member("interimResponses", ifPresent: interimResponses)
            json.member("interimWithheld", ifPresent: interimWithheld)
            json.member("relayed", ifPresent: relayed)
            json.member("translation", ifPresent: translation)
            json.member("broken", ifPresent: broken)
        }
    }
}

extension RelayedStreams: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("clientToServer", ifPresent: clientToServer)
            json.member("serverToClient", ifPresent: serverToClient)
        }
    }
}

extension RelayedStreams.Stream: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("bytes", bytes)
            json.key("sha256")
            json.hex(sha256)
        }
    }
}

extension TLSDetails: JSONWritable {
    @inline(__always)
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("version", ifPresent: version)
            json.member("cipher", ifPresent: cipher)
            json.member("sni", ifPresent: sni)
            json.member("sniIssue", ifPresent: sniIssue)
            json.member("alpn", ifPresent: alpn)
            json.member("peerCertificateSHA256", ifPresent: peerCertificateSHA256)
            json.member("clientCertificateSubject", ifPresent: clientCertificateSubject)
        }
    }
}

extension RecordedMessage: JSONWritable {
    @inline(__always)
    public func write(to json: inout JSONWriter) {
        json.object { json in
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
                json.object { json in
                    json.member("base64", body.base64)
                    json.member("truncated", body.truncated)
                }
            }
            json.member("complete", complete)
            json.key("timings")
            json.object { json in
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
            }
        }
    }
}

extension RecordedField {
    static func write(_ fields: [RecordedField], to json: inout JSONWriter) {
        json.array { json in
            for field in fields {
                json.object { json in
                    json.member("name", field.name)
                    json.member("value", field.value)
                    if let redacted = field.redacted { json.member("redacted", redacted) }
                    if let cookies = field.cookies {
                        json.key("cookies")
                        json.array { json in
                            for cookie in cookies {
                                json.object { json in
                                    json.member("name", cookie.name)
                                    json.member("value", cookie.value)
                                    json.key("attributes")
                                    json.array(cookie.attributes)
                                    if let opaque = cookie.opaque { json.member("opaque", opaque) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
