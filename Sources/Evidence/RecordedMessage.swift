import Foundation
import HTTP

/// One message (request or response) as one tap saw it on one leg: the head
/// values (secrets redacted), every digest, an optional copy of the body, and
/// when it passed.
///
/// Request-only values (`method`, `scheme`, `authority`, `path`,
/// `targetForm`) are nil on a response; response-only values (`status`,
/// `reason`) are nil on a request.
///
/// Optional properties are spelled `Optional<…>`: one written `T?` is set to
/// nil before the initialiser assigns it, and Swift then copies the whole
/// message out of the initialiser (a retain and a release of every string
/// and list in it), once per message recorded.
public struct RecordedMessage: Codable, Hashable, Sendable {
    public var method: Optional<String>
    /// The request's scheme, or the scheme of its connection when the wire did
    /// not carry one (origin form over HTTP/1.1).
    public var scheme: Optional<String>
    public var authority: Optional<String>
    /// Path and query as received, secret query parameter values digested (`RedactionPolicy`).
    public var path: Optional<String>
    public var targetForm: Optional<RequestTargetForm>
    /// An RFC 8441 extended CONNECT's `:protocol` (`websocket`); nil otherwise.
    public var connectProtocol: Optional<String>
    public var status: Optional<Int>
    public var reason: Optional<String>
    public var version: HTTPVersion
    /// The regular fields in wire order and case, secrets redacted.
    public var fields: [RecordedField]
    /// The trailer fields, secrets redacted; nil when there were none.
    public var trailers: Optional<[RecordedField]>
    /// Head, body (length and SHA-256 after transfer-decoding) and trailer digests.
    public var digest: MessageDigest
    /// The stored body, when the recording stores bodies.
    public var body: Optional<StoredBody>
    /// False when the message ended early (reset, timeout); the body digest
    /// then covers only what arrived.
    public var complete: Bool
    public var timings: MessageTimings

    public init(method: String? = nil, scheme: String? = nil, authority: String? = nil, path: String? = nil,
                targetForm: RequestTargetForm? = nil, connectProtocol: String? = nil, status: Int? = nil,
                reason: String? = nil, version: HTTPVersion, fields: [RecordedField], trailers: [RecordedField]? = nil,
                digest: MessageDigest, body: StoredBody? = nil, complete: Bool = true, timings: MessageTimings) {
        self.method = method
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.targetForm = targetForm
        self.connectProtocol = connectProtocol
        self.status = status
        self.reason = reason
        self.version = version
        self.fields = fields
        self.trailers = trailers
        self.digest = digest
        self.body = body
        self.complete = complete
        self.timings = timings
    }

    /// Records a request head with its digests, redacting secrets (fields,
    /// secret query parameters in the target, secret form fields in a stored body).
    /// The head's `Content-Type` is looked up only when there is a stored
    /// body (most recordings store none).
    ///
    /// - Parameter connectionScheme: the scheme of the connection, recorded
    ///   when the head carries none (pass the same value given to `HeadDigest`).
    /// - Parameter recordedFields: the head's fields as `redaction` records
    ///   them, when the caller has them already (the other leg's message
    ///   that forwarded this very field list: `RedactionPolicy.record` gives
    ///   the same fields for it); nil records them here.
    public init(request head: borrowing HTTPRequestHead, connectionScheme: String, digest: MessageDigest,
                trailers: HTTPFields? = nil, body: StoredBody? = nil, complete: Bool = true,
                timings: MessageTimings, redaction: borrowing RedactionPolicy, recordedFields: [RecordedField]? = nil) {
        self.init(method: head.method.rawValue, scheme: head.scheme ?? connectionScheme, authority: head.authority,
                  path: redaction.recordTarget(head.path), targetForm: head.targetForm,
                  connectProtocol: head.connectProtocol, version: head.version,
                  fields: recordedFields ?? redaction.record(head.fields),
                  trailers: RecordedMessage.recordTrailers(trailers, redaction),
                  digest: digest,
                  body: body == nil ? nil : redaction.recordBody(body, contentType: head.fields["content-type"]),
                  complete: complete, timings: timings)
    }

    /// Records a response head with its digests, redacting secrets (fields,
    /// secret form fields in a stored body); `recordedFields` as for a request.
    public init(response head: borrowing HTTPResponseHead, digest: MessageDigest, trailers: HTTPFields? = nil,
                body: StoredBody? = nil, complete: Bool = true, timings: MessageTimings,
                redaction: borrowing RedactionPolicy, recordedFields: [RecordedField]? = nil) {
        self.init(status: head.status.code, reason: head.reason, version: head.version,
                  fields: recordedFields ?? redaction.record(head.fields),
                  trailers: RecordedMessage.recordTrailers(trailers, redaction),
                  digest: digest,
                  body: body == nil ? nil : redaction.recordBody(body, contentType: head.fields["content-type"]),
                  complete: complete, timings: timings)
    }

    private static func recordTrailers(_ trailers: HTTPFields?, _ redaction: borrowing RedactionPolicy) -> [RecordedField]? {
        guard let trailers, !trailers.isEmpty else { return nil }
        return redaction.record(trailers)
    }

    /// The first recorded value of a field (case-insensitive name), redacted or not.
    public func firstValue(_ name: String) -> String? {
        let name = HTTPField.Name(name)
        return fields.first { name.matches($0.name) }?.value
    }
}

/// When a message passed a tap. Each instant is optional because a broken
/// exchange may stop anywhere.
public struct MessageTimings: Codable, Hashable, Sendable {
    /// The first byte of the head was sent or received.
    public var start: Timestamp?
    /// The head was complete.
    public var headersDone: Timestamp?
    /// The last byte of the body (or the trailers) passed.
    public var end: Timestamp?

    public init(start: Timestamp? = nil, headersDone: Timestamp? = nil, end: Timestamp? = nil) {
        self.start = start
        self.headersDone = headersDone
        self.end = end
    }
}

/// A copy of a body kept in a recording, up to the recording's size limit.
public struct StoredBody: Codable, Hashable, Sendable {
    /// The kept bytes, base64 (RFC 4648 §4, padded).
    public var base64: String
    /// True when the body was longer than the limit and only its first bytes are kept.
    public var truncated: Bool

    public init(base64: String, truncated: Bool) {
        self.base64 = base64
        self.truncated = truncated
    }

    /// The kept bytes; nil if `base64` is not valid base64.
    public var bytes: [UInt8]? {
        Data(base64Encoded: base64).map { [UInt8]($0) }
    }
}
