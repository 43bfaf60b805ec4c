import Codecs

extension BrowserRun {
    /// The run as one JSON object (pretty enough to read, written with
    /// `JSONWriter`): `callback`, `failure`, `trace`, `findings`, `activity`
    /// and `exchanges` (method, URL, type, trace id, protocol, status, the
    /// fields sent and received as DevTools gave them, refused cookies, net error).
    public var jsonBytes: [UInt8] {
        var writer = JSONWriter(capacity: 4096)
        writer.openObject()
        writer.member("callback", ifPresent: callbackURL)
        writer.member("failure", ifPresent: failure?.description)
        writer.member("trace", trace.description)
        writer.key("findings")
        writer.array(findings.map(\.description))
        writer.key("activity")
        writer.array(activity)
        writer.key("exchanges")
        writer.openArray()
        for exchange in exchanges {
            writer.openObject()
            writer.member("method", exchange.method)
            writer.member("url", exchange.url)
            writer.member("type", exchange.resourceType)
            writer.member("mainDocument", exchange.isMainDocument)
            writer.member("trace", ifPresent: exchange.traceID)
            writer.member("protocol", ifPresent: exchange.protocolName)
            writer.member("status", ifPresent: exchange.status)
            writer.key("requestFields")
            BrowserRun.write(exchange.requestFields, to: &writer)
            writer.member("requestFieldsFinal", exchange.requestFieldsAreFinal)
            writer.key("responseFields")
            BrowserRun.write(exchange.responseFields, to: &writer)
            writer.member("responseHead", ifPresent: exchange.responseHeadText)
            if !exchange.blockedCookies.isEmpty {
                writer.key("blockedCookies")
                writer.array(exchange.blockedCookies.map { "\($0.name): \($0.reasons.joined(separator: ",")): \($0.line)" })
            }
            writer.member("netError", ifPresent: exchange.netError)
            writer.member("blockedReason", ifPresent: exchange.blockedReason)
            writer.member("redirectedTo", ifPresent: exchange.redirectedTo)
            writer.closeObject()
        }
        writer.closeArray()
        writer.closeObject()
        writer.endLine()
        return writer.bytes
    }

    private static func write(_ fields: [(name: String, value: String)], to writer: inout JSONWriter) {
        writer.openArray()
        for field in fields {
            writer.array([field.name, field.value])
        }
        writer.closeArray()
    }
}
