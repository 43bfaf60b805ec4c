import Hashing

/// The digests of one message head (request or response), as `VERIFY.md`
/// defines them, plus the little context a comparison needs to explain a
/// difference without seeing any field value.
///
/// Every digest is taken with the recording's `DigestFunction` (SHA-256, or
/// HMAC-SHA-256 under its digest key); the names below say SHA-256 for short.
///
/// - `exact` changes with any byte of the header section as it travelled.
/// - `semantic` changes only with what HTTP does not let an intermediary
///   change; its input is specified in `HeadDigest+Canonical.swift`.
/// - `fields` holds one digest per lowercased field name, so a comparison can
///   name each field added, removed or changed even when values are redacted.
///
/// A value is built once per message on the connection's loop (see the
/// initialisers in `HeadDigest+Canonical.swift`) and then only read.
public struct HeadDigest: Codable, Hashable, Sendable {
    /// SHA-256 over the header section as it was on the wire (see `WireForm`).
    public var exact: SHA256Digest
    /// SHA-256 over the canonical semantic form.
    public var semantic: SHA256Digest
    /// Per lowercased field name: SHA-256 over `count(V) item(value_1) … item(value_V)`
    /// preceded by `item(name)` — the same bytes the name's group contributes to
    /// the semantic form. Every regular field present has an entry, including
    /// the ones the semantic form leaves out (hop-by-hop, `content-length`, `host`).
    public var fields: FieldDigests
    /// The regular field names in the order they appeared, with their original
    /// case (never pseudo-fields). Names are not secret; values are not kept here.
    public var fieldNames: [String]
    /// The lowercased names present in this head that were hop-by-hop here: the
    /// fixed list plus those named by `Connection`; sorted.
    public var hopByHop: [String]
    /// The version the message travelled in.
    public var version: HTTPVersion
    /// Bytes of the header section: the raw head length for HTTP/1.1 (blank
    /// line excluded); for HTTP/2 the sum of decoded name and value lengths.
    public var wireLength: Int

    /// Requests only: the method in clear.
    public var method: String?
    /// Requests only: SHA-256 over `item(scheme) item(authority) item(path)`
    /// as they enter the semantic form.
    public var target: SHA256Digest?
    /// Requests only: the form the target took.
    public var targetForm: RequestTargetForm?
    /// HTTP/2 requests only: the order of the pseudo-fields on the wire (the
    /// `exact` digest covers it; `verify` names it when only it differs).
    /// Nil for HTTP/1.x, for responses (one pseudo-field, `:status`), and in
    /// records of builds before it was recorded.
    public var pseudoFieldOrder: HTTP2PseudoFieldOrder?

    /// Responses only: the status code.
    public var status: Int?
    /// Responses only: the reason phrase (HTTP/1.1; empty for HTTP/2).
    public var reasonPhrase: String?

    /// The digest of a request head whose digests are not taken (records
    /// nothing reads digests from: a proxy with no recording file and a log
    /// of method, URL, status and length only, `RecordingSettings.takesDigests`):
    /// `exact`, `semantic` and `target` are `SHA256Digest.untaken`, `fields`,
    /// `fieldNames` and `hopByHop` empty, `wireLength` 0; what is in clear
    /// (version, method, target form) is the head's. Never written to a recording.
    public init(untaken head: borrowing HTTPRequestHead) {
        self.init(untakenVersion: head.version)
        method = head.method.rawValue
        target = .untaken
        targetForm = head.targetForm
    }

    /// The digest of a response head whose digests are not taken, as
    /// `init(untaken:)` of a request says; status and reason are the head's.
    public init(untaken head: borrowing HTTPResponseHead) {
        self.init(untakenVersion: head.version)
        status = head.status.code
        reasonPhrase = head.reason
    }

    /// Digests untaken, nothing in clear but the version: where the initialisers start (those of
    /// `HeadDigest+Canonical.swift` then fill every digest in place).
    init(untakenVersion version: HTTPVersion) {
        exact = .untaken
        semantic = .untaken
        fields = FieldDigests()
        fieldNames = []
        hopByHop = []
        self.version = version
        wireLength = 0
    }

    /// The header section as it crossed the wire, the input of `exact`.
    public enum WireForm: Sendable {
        /// HTTP/1.1: the raw head bytes from the first byte of the start line
        /// through the CRLF ending the last field line; the blank line is
        /// excluded. `exact` is the plain SHA-256 of these bytes. A slice, so
        /// a sent head's wire form is its serialized bytes less the blank
        /// line (`HTTP1SerializedHead.rawHead`) with no copy.
        case http1(head: ArraySlice<UInt8>)
        /// HTTP/1.1 raw head bytes held as an array (a parsed head's `rawHead`).
        public static func http1(head: [UInt8]) -> WireForm {
            .http1(head: head[...])
        }

        /// HTTP/2: the decoded field list in order, pseudo-fields first, names
        /// as decoded (lowercase). `exact` is SHA-256 over
        /// `item(name_1) item(value_1) … item(name_n) item(value_n)`.
        case http2(fields: [HTTPField])

        /// The HTTP/2 field list of a request head as a sender emits it:
        /// `:method`, `:scheme`, `:authority`, `:path` (CONNECT: `:method`,
        /// `:authority`; in the head's `pseudoFieldOrder` when it has one),
        /// then the regular fields with lowercased names.
        public static func http2Request(_ head: HTTPRequestHead) -> WireForm {
            var list: [HTTPField] = [HTTPField(name: ":method", value: head.method.rawValue)]
            if head.isExtendedConnect {
                return .http2(fields: HTTP2FieldMapping.requestList(head))
            } else if head.method == .connect {
                list.append(HTTPField(name: ":authority", value: head.authority ?? ""))
            } else {
                list.append(HTTPField(name: ":scheme", value: head.scheme ?? "https"))
                if let authority = head.authority { list.append(HTTPField(name: ":authority", value: authority)) }
                list.append(HTTPField(name: ":path", value: head.path))
            }
            head.pseudoFieldOrder?.arrange(&list, pseudoFieldCount: list.count)
            for field in head.fields { list.append(HTTPField(name: field.lowercasedName, value: field.value)) }
            return .http2(fields: list)
        }

        /// The HTTP/2 field list of a response head: `:status`, then the
        /// regular fields with lowercased names.
        public static func http2Response(_ head: HTTPResponseHead) -> WireForm {
            var list: [HTTPField] = [HTTPField(name: ":status", value: String(head.status.code))]
            for field in head.fields { list.append(HTTPField(name: field.lowercasedName, value: field.value)) }
            return .http2(fields: list)
        }
    }
}
