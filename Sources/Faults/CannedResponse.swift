import Codecs
import HTTP

/// A response an intermediary sends on its own: a gateway's redirect, a
/// maintenance page, a block page.
public struct CannedResponse: Sendable, Hashable {
    public var status: Int
    /// The reason phrase; nil for the standard one. HTTP/2 carries none.
    public var reason: String?
    /// Fields in order. `Content-Length` is added when absent.
    public var fields: HTTPFields
    public var body: [UInt8]

    public init(status: Int, reason: String? = nil, fields: HTTPFields = HTTPFields(), body: [UInt8] = []) {
        self.status = status
        self.reason = reason
        self.fields = fields
        self.body = body
    }

    /// A response with a small HTML page (`Content-Type: text/html; charset=utf-8`).
    init(status: Int, fields: [(String, String)], html title: String, detail: String) {
        var all = HTTPFields(fields.map { HTTPField(name: $0.0, value: $0.1) })
        all.append("Content-Type", CannedResponse.htmlContentType)
        self.init(status: status, fields: all, body: CannedResponse.htmlPage(title: title, detail: detail))
    }

    static let htmlContentType = "text/html; charset=utf-8"

    /// A minimal HTML page, the kind gateways and error handlers send.
    public static func htmlPage(title: String, detail: String) -> [UInt8] {
        let t = title.htmlEscaped, d = detail.htmlEscaped
        return Array("<!DOCTYPE html>\n<html><head><title>\(t)</title></head>\n<body><h1>\(t)</h1><p>\(d)</p></body></html>\n".utf8)
    }

    /// The response as parts in `version`: head, body (when not empty), end.
    func parts(version: HTTPVersion) -> [HTTPResponsePart] {
        var fields = self.fields
        if !fields.contains("Content-Length") { fields.append("Content-Length", String(body.count)) }
        let head = HTTPResponseHead(status: HTTPStatus(status), reason: version == .http2 ? "" : reason,
                                    version: version, fields: fields)
        return body.isEmpty ? [.head(head), .end(trailers: nil)] : [.head(head), .body(body), .end(trailers: nil)]
    }

    /// "302 to https://…" or "503, 1234 bytes of text/html" for the record.
    var summary: String {
        var s = "\(status)"
        if let location = fields["Location"] { s += " to \(location)" }
        if !body.isEmpty { s += ", \(body.count) bytes" + (fields["Content-Type"].map { " of \($0)" } ?? "") }
        return s
    }
}
