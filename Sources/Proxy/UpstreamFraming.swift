import HTTP

/// How a request's body is framed on its way upstream: what its forwarded
/// head declares, else how the client framed it. The transport writes an
/// HTTP/1.1 body this way (an HTTP/2 leg only uses whether there is one).
enum UpstreamFraming {
    /// `Content-Length` of the forwarded head when valid (a list of one
    /// length, `5, 5`, included), chunked when it has
    /// `Transfer-Encoding`; otherwise no body when the client sent none, and
    /// chunked (length unknown) when it did without declaring a length
    /// (an HTTP/2 client).
    static func framing(of head: HTTPRequestHead, clientFraming: HTTP1Framing) -> HTTP1Framing {
        if head.fields.contains("transfer-encoding") { return .chunked }
        if let length = ContentLengthList.agreedLength(head.fields.values("content-length")) {
            return .contentLength(length)
        }
        switch clientFraming {
        case .none, .tunnel, .contentLength(0): return .none
        case .contentLength, .chunked, .closeDelimited: return .chunked
        }
    }
}
