import HTTP

// A head as it crossed the wire, for recording: what a tap at the other end
// decodes, so both ends record the same field names, version and reason.
// HTTP/1.1 heads travel as they are; an HTTP/2 head travels as its field list
// (lowercase names, `Host` folded into `:authority`, connection-specific
// fields dropped, no reason phrase), which `wire` holds.

extension HTTPRequestHead {
    /// This head as it crossed the wire in `wire`.
    func travelled(as wire: HeadDigest.WireForm) -> HTTPRequestHead {
        guard case .http2(let list) = wire else { return self }
        var head = self
        head.version = .http2
        head.fields = HTTPFields(list.filter { !$0.name.hasPrefix(":") })
        for field in list where field.name == ":authority" { head.authority = field.value }
        return head
    }
}

extension HTTPResponseHead {
    /// This head as it crossed the wire in `wire`.
    func travelled(as wire: HeadDigest.WireForm) -> HTTPResponseHead {
        guard case .http2(let list) = wire else { return self }
        return HTTPResponseHead(status: status, reason: "", version: .http2,
                                fields: HTTPFields(list.filter { !$0.name.hasPrefix(":") }))
    }
}
