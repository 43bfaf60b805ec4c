/// A head as `HTTP1Serializer` wrote it.
public struct HTTP1SerializedHead: Hashable, Sendable {
    /// The bytes to send: start line, field lines, then the blank line.
    public var bytes: [UInt8]
    /// The framing the body that follows must use.
    public var framing: HTTP1Framing
    /// The fields as sent: the caller's, in order, plus any framing field the
    /// serializer had to append (`Content-Length` or `Transfer-Encoding`).
    public var fields: HTTPFields

    /// The start line through the CRLF that ends the last field line, without
    /// the blank line: the same span as a parsed head's `rawHead`, so the
    /// "exact head" digest of what was sent compares with what was received.
    public var rawHead: ArraySlice<UInt8> { bytes.dropLast(2) }

    public init(bytes: [UInt8], framing: HTTP1Framing, fields: HTTPFields) {
        self.bytes = bytes
        self.framing = framing
        self.fields = fields
    }
}
