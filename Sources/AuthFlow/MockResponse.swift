import HTTP

/// The mock server's answer: a head (with `Content-Length`) and the whole
/// body, plus what the server decided, for its own recording.
public struct MockResponse: Hashable, Sendable {
    public var head: HTTPResponseHead
    public var body: [UInt8]
    /// The flow step this exchange was, as `StepClassifier` labels it.
    public var step: AuthStep
    /// One line saying what the server did and why (`"rejected: token already used"`).
    public var note: String

    public init(head: HTTPResponseHead, body: [UInt8], step: AuthStep, note: String) {
        self.head = head
        self.body = body
        self.step = step
        self.note = note
    }

    /// The body as UTF-8 text (for logs and tests).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
