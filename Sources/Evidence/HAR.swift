import HTTP

/// The HAR 1.2 document model (http://www.softwareishard.com/blog/har-12-spec/),
/// only as far as `HARExporter` writes it. Optional standard fields that are
/// nil are left out; Intact's own data goes in `_`-prefixed custom fields, as
/// the spec allows.
enum HAR {
    struct Document: Encodable {
        var log: Log
    }

    struct Log: Encodable {
        var version = "1.2"
        var creator: Creator
        var entries: [Entry]
        /// Where each entry came from: one per recording exported.
        var _recordings: [RecordingSummary]
    }

    struct Creator: Encodable {
        var name: String
        var version: String
    }

    struct RecordingSummary: Encodable {
        var path: String
        var tap: String
        var mode: String
        var format: Int
        var toolVersion: String
        var started: String
    }

    struct Entry: Encodable {
        var startedDateTime: String
        var time: Double
        var request: Request
        var response: Response
        var cache = Cache()
        var timings: Timings
        var connection: String?
        var _exchangeID: String
        var _traceID: String?
        var _tap: String
        var _leg: String
        var _streamID: Int?
        var _authFlowStep: String?
        var _requestDigest: MessageDigest?
        var _responseDigest: MessageDigest?
        var _tls: TLSDetails?
        var _faults: [ExchangeRecord.RecordedFault]
        var _error: ExchangeRecord.Failure?
        /// The exchange's other legs by role (a proxy's `upstream`): what
        /// crossed the tap's far side. Absent for a one-leg record.
        var _intact: [String: OtherLeg]?
    }

    /// A leg of the exchange that is not the entry's own, in the entry's shapes.
    struct OtherLeg: Encodable {
        var connection: String
        var streamID: Int?
        var startedDateTime: String?
        var time: Double
        var timings: Timings
        /// Absent when the request never crossed this leg (refused upstream).
        var request: Request?
        var response: Response?
        var requestDigest: MessageDigest?
        var responseDigest: MessageDigest?
        var tls: TLSDetails?
    }

    struct Request: Encodable {
        var method: String
        var url: String
        var httpVersion: String
        var cookies: [Cookie]
        var headers: [NameValue]
        var queryString: [NameValue]
        var postData: PostData?
        var headersSize: Int
        var bodySize: Int
    }

    struct Response: Encodable {
        var status: Int
        var statusText: String
        var httpVersion: String
        var cookies: [Cookie]
        var headers: [NameValue]
        var content: Content
        var redirectURL: String
        var headersSize: Int
        var bodySize: Int
    }

    struct NameValue: Encodable {
        var name: String
        var value: String
        /// Set when the value is a digest standing in for a secret.
        var _redacted: Bool?
    }

    struct Cookie: Encodable {
        var name: String
        var value: String
        var path: String?
        var domain: String?
        var expires: String?
        var httpOnly: Bool?
        var secure: Bool?
    }

    struct PostData: Encodable {
        var mimeType: String
        var params: [NameValue] = []
        var text: String
        /// `base64` when `text` holds base64 because the body is not UTF-8.
        var _encoding: String?
        var _truncated: Bool?
        /// Why a `Content-Encoding` body could not be decoded.
        var _decodingError: String?
    }

    struct Content: Encodable {
        /// Bytes of the content after content-decoding (the body size when
        /// it was not compressed).
        var size: Int
        /// Bytes saved by the content coding (`size - bodySize`), when decoded.
        var compression: Int?
        var mimeType: String
        var text: String?
        var encoding: String?
        var _truncated: Bool?
        /// Why a `Content-Encoding` body could not be decoded (its bytes are then in `text` as base64).
        var _decodingError: String?
    }

    struct Cache: Encodable {}

    struct Timings: Encodable {
        var blocked: Double = -1
        var dns: Double = -1
        var connect: Double = -1
        var ssl: Double = -1
        var send: Double
        var wait: Double
        var receive: Double
    }
}
