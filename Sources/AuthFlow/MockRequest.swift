import HTTP

/// One request as the mock server sees it: the head, the whole body (the
/// I/O layer buffers it, up to `MockServerConfiguration.maxRequestBodyBytes`)
/// and the subject of the client certificate the TLS layer verified, if any.
public struct MockRequest: Hashable, Sendable {
    public var head: HTTPRequestHead
    public var body: [UInt8]
    /// The verified client certificate's subject (e.g. `CN=alice,O=Example`), or nil.
    public var clientCertificateSubject: String?

    public init(head: HTTPRequestHead, body: [UInt8] = [], clientCertificateSubject: String? = nil) {
        self.head = head
        self.body = body
        self.clientCertificateSubject = clientCertificateSubject
    }
}
