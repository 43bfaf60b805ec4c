extension HeadDigest.WireForm {
    /// The HTTP/2 field list `HTTP2Session.sendRequest` puts on the wire for
    /// this head, through the same mapping (`Host` becomes `:authority`,
    /// connection-specific fields are dropped, an empty path is `/`). A
    /// sender records this as its "as sent" wire form, so the exact digest
    /// matches what the peer decodes even when the head carried such fields.
    public static func http2Sent(request head: HTTPRequestHead) -> HeadDigest.WireForm {
        .http2(fields: HTTP2FieldMapping.requestList(head))
    }

    /// The HTTP/2 field list `HTTP2Session.sendResponse` puts on the wire for
    /// this head: `:status`, then the regular fields lowercased, without
    /// connection-specific ones.
    public static func http2Sent(response head: HTTPResponseHead) -> HeadDigest.WireForm {
        .http2(fields: HTTP2FieldMapping.responseList(head))
    }
}
