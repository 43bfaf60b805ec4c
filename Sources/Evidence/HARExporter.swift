import Compression
import Foundation
import HTTP

/// Exports recordings as one HAR 1.2 log, so they open in browser devtools
/// and other HTTP tools.
///
/// One entry per exchange, ordered by start time: the entry is the client's
/// view — the first leg that carried a request (a proxy's `downstream`, a
/// client's or server's only leg). The exchange's other legs (a proxy's
/// `upstream`: the request as sent to the server, the response as received)
/// go into the entry's `_intact` object, by role, in the same request and
/// response shapes plus their digests, TLS and timings. Values are exported
/// as recorded, so secrets stay `hmac-sha256:` digests (in headers, query
/// strings and form bodies). Intact's own data is in `_`-prefixed fields:
/// `_exchangeID`, `_traceID`, `_tap`, `_leg`, `_streamID`, `_authFlowStep`,
/// `_requestDigest`, `_responseDigest`, `_tls`, `_faults`, `_error`,
/// `_intact` on entries, `_redacted` on headers, and `_recordings` on the log.
///
/// Bodies: a stored body with `Content-Encoding: gzip`, `x-gzip` or
/// `deflate` is decoded (zlib) for `content.text`; `content.size` is then the
/// decoded length and `content.compression` the bytes saved, while
/// `bodySize` stays the length as transferred. A body that does not decode
/// keeps its bytes (base64) and says why in `_decodingError`.
///
/// Sizes: `headersSize` is the HTTP/1.1 head length including the blank line,
/// -1 for HTTP/2 (its compressed size is not recorded); `bodySize` is the
/// content length after transfer-decoding (chunk framing is not counted).
/// A leg with no response gets HAR's conventional empty response (status 0)
/// and the entry carries the exchange's `_error`.
public enum HARExporter {
    /// The most bytes a stored body is decoded to (a decompression bomb stops here).
    static let decodedBodyLimit = 64 * 1024 * 1024

    /// The HAR document as UTF-8 JSON, pretty-printed with sorted keys.
    ///
    /// - Parameter creatorVersion: Intact's version, for `log.creator.version`.
    public static func export(_ recordings: [Recording], creatorVersion: String) throws -> [UInt8] {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var timed: [(start: Timestamp, entry: HAR.Entry)] = []
        for recording in recordings {
            for record in recording.records {
                guard let leg = record.legs.first(where: { $0.request != nil }), let request = leg.request else { continue }
                let start = request.timings.start ?? request.timings.headersDone
                    ?? leg.response?.timings.start ?? recording.header.started
                timed.append((start, entry(record, leg, request, start: start, formatter: formatter)))
            }
        }
        // Stable: entries that started together keep recording order.
        let entries = timed.enumerated().sorted {
            ($0.element.start, $0.offset) < ($1.element.start, $1.offset)
        }.map(\.element.entry)
        let summaries = recordings.map {
            HAR.RecordingSummary(path: $0.path, tap: $0.header.tap, mode: $0.header.mode, format: $0.header.format,
                                 toolVersion: $0.header.toolVersion, started: formatter.string(from: $0.header.started.date))
        }
        let document = HAR.Document(log: HAR.Log(creator: HAR.Creator(name: "intact", version: creatorVersion),
                                                 entries: entries, _recordings: summaries))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return [UInt8](try encoder.encode(document))
    }

    private static func entry(_ record: ExchangeRecord, _ leg: ExchangeRecord.Leg, _ request: RecordedMessage,
                              start: Timestamp, formatter: ISO8601DateFormatter) -> HAR.Entry {
        let timings = self.timings(request: request.timings, response: leg.response?.timings)
        var others: [String: HAR.OtherLeg] = [:]
        for other in record.legs where other.role != leg.role {
            others[other.role.rawValue] = otherLeg(other, formatter: formatter)
        }
        return HAR.Entry(
            startedDateTime: formatter.string(from: start.date),
            time: timings.send + timings.wait + timings.receive,
            request: harRequest(request),
            response: leg.response.map(harResponse) ?? emptyResponse,
            timings: timings,
            connection: leg.connectionID,
            _exchangeID: record.exchangeID, _traceID: record.traceID, _tap: record.tap, _leg: leg.role.rawValue,
            _streamID: leg.streamID, _authFlowStep: record.authFlowStep,
            _requestDigest: request.digest, _responseDigest: leg.response?.digest,
            _tls: leg.tls, _faults: record.faults, _error: record.error,
            _intact: others.isEmpty ? nil : others)
    }

    private static func otherLeg(_ leg: ExchangeRecord.Leg, formatter: ISO8601DateFormatter) -> HAR.OtherLeg {
        let timings = leg.request.map { self.timings(request: $0.timings, response: leg.response?.timings) }
            ?? HAR.Timings(send: 0, wait: 0, receive: 0)
        let start = leg.request?.timings.start ?? leg.request?.timings.headersDone ?? leg.response?.timings.start
        return HAR.OtherLeg(
            connection: leg.connectionID, streamID: leg.streamID,
            startedDateTime: start.map { formatter.string(from: $0.date) },
            time: timings.send + timings.wait + timings.receive, timings: timings,
            request: leg.request.map(harRequest), response: leg.response.map(harResponse),
            requestDigest: leg.request?.digest, responseDigest: leg.response?.digest, tls: leg.tls)
    }

    private static func harRequest(_ message: RecordedMessage) -> HAR.Request {
        let path = message.path ?? ""
        return HAR.Request(
            method: message.method ?? "",
            url: url(message),
            httpVersion: message.version.rawValue,
            cookies: message.fields.filter { isNamed($0, "cookie") && !$0.isRedacted }.flatMap { requestCookies($0.value) },
            headers: message.fields.map(nameValue),
            queryString: queryString(path),
            postData: message.body.map { postData($0, message) },
            headersSize: headersSize(message),
            bodySize: message.digest.body.length)
    }

    private static func harResponse(_ message: RecordedMessage) -> HAR.Response {
        let mimeType = message.firstValue("content-type") ?? ""
        var content = HAR.Content(size: message.digest.body.length, mimeType: mimeType)
        if let body = message.body {
            let decoded = decodedBody(body, message)
            content.text = decoded.text
            content.encoding = decoded.isBase64 ? "base64" : nil
            content._truncated = body.truncated ? true : nil
            content._decodingError = decoded.error
            if decoded.wasDecoded, !body.truncated {
                content.size = decoded.length
                content.compression = decoded.length - message.digest.body.length
            }
        }
        return HAR.Response(
            status: message.status ?? 0,
            statusText: message.reason ?? "",
            httpVersion: message.version.rawValue,
            cookies: message.fields.filter { isNamed($0, "set-cookie") && !$0.isRedacted }.compactMap { setCookie($0.value) },
            headers: message.fields.map(nameValue),
            content: content,
            redirectURL: message.firstValue("location") ?? "",
            headersSize: headersSize(message),
            bodySize: message.digest.body.length)
    }

    /// A stored body as HAR text, content-decoded when its `Content-Encoding`
    /// is gzip or deflate: the UTF-8 text when it is valid UTF-8, otherwise
    /// base64 (flagged). A truncated body decodes as far as it goes.
    private static func decodedBody(_ body: StoredBody, _ message: RecordedMessage)
        -> (text: String, isBase64: Bool, wasDecoded: Bool, length: Int, error: String?) {
        guard let bytes = body.bytes else { return (body.base64, true, false, 0, nil) }
        var content = bytes
        var decoded = false
        var problem: String?
        let codings = (message.firstValue("content-encoding") ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && $0.lowercased() != "identity" }
        if codings.count == 1 {
            do {
                if let decompressor = try Decompressor(contentCoding: codings[0], outputLimit: decodedBodyLimit) {
                    content = try decompressor.decompress(bytes)
                    if !body.truncated { try decompressor.finish() }
                    decoded = true
                }
            } catch {
                content = bytes
                problem = "\(codings[0]) content coding: \(error)"
            }
        } else if codings.count > 1 {
            problem = "content codings \(codings.joined(separator: ", ")) are not decoded"
        }
        if let text = String(bytes: content, encoding: .utf8) { return (text, false, decoded, content.count, problem) }
        return (Data(content).base64EncodedString(), true, decoded, content.count, problem)
    }

    /// HAR's convention for a request that got no response.
    private static let emptyResponse = HAR.Response(
        status: 0, statusText: "", httpVersion: "", cookies: [], headers: [],
        content: HAR.Content(size: 0, mimeType: ""), redirectURL: "", headersSize: -1, bodySize: -1)

    /// send: request start → end; wait: request end → response head; receive:
    /// response head → end. Unknown or negative spans count as 0 (HAR forbids -1 here).
    private static func timings(request: MessageTimings, response: MessageTimings?) -> HAR.Timings {
        func span(_ from: Timestamp?, _ to: Timestamp?) -> Double {
            guard let from, let to else { return 0 }
            return max(0, from.milliseconds(until: to))
        }
        let requestEnd = request.end ?? request.headersDone
        let responseHead = response?.headersDone ?? response?.start
        return HAR.Timings(send: span(request.start, requestEnd),
                           wait: span(requestEnd, responseHead),
                           receive: span(responseHead, response?.end))
    }

    private static func url(_ message: RecordedMessage) -> String {
        let scheme = message.scheme ?? "http"
        let authority = message.authority ?? message.firstValue("host") ?? ""
        switch message.targetForm {
        case .authority?: return "\(scheme)://\(authority)"
        case .asterisk?: return "\(scheme)://\(authority)/*"
        default: return "\(scheme)://\(authority)\(message.path ?? "")"
        }
    }

    private static func headersSize(_ message: RecordedMessage) -> Int {
        message.version == .http2 ? -1 : message.digest.head.wireLength + 2
    }

    private static func isNamed(_ field: RecordedField, _ lowercasedName: String) -> Bool {
        HTTPField.Name(lowercasedName).matches(field.name)
    }

    private static func nameValue(_ field: RecordedField) -> HAR.NameValue {
        HAR.NameValue(name: field.name, value: field.value, _redacted: field.redacted)
    }

    /// `a=1; b=2` → two cookies.
    private static func requestCookies(_ value: String) -> [HAR.Cookie] {
        value.split(separator: ";").compactMap { pair in
            let (name, value) = splitPair(pair)
            return name.isEmpty ? nil : HAR.Cookie(name: name, value: value)
        }
    }

    /// `n=v; Path=/; Domain=d; Expires=…; HttpOnly; Secure` → one cookie.
    private static func setCookie(_ value: String) -> HAR.Cookie? {
        var parts = value.split(separator: ";")[...]
        guard let first = parts.popFirst() else { return nil }
        let (name, cookieValue) = splitPair(first)
        guard !name.isEmpty else { return nil }
        var cookie = HAR.Cookie(name: name, value: cookieValue)
        for attribute in parts {
            let (key, attributeValue) = splitPair(attribute)
            switch HTTPField.lowercaseASCII(key) {
            case "path": cookie.path = attributeValue
            case "domain": cookie.domain = attributeValue
            case "expires": cookie.expires = attributeValue
            case "httponly": cookie.httpOnly = true
            case "secure": cookie.secure = true
            default: break
            }
        }
        return cookie
    }

    /// Splits `name=value` at the first `=`, trimming spaces; no `=` gives an empty value.
    private static func splitPair(_ pair: Substring) -> (String, String) {
        let trimmed = pair.trimmingCharacters(in: .whitespaces)
        guard let equals = trimmed.firstIndex(of: "=") else { return (trimmed, "") }
        return (String(trimmed[..<equals]).trimmingCharacters(in: .whitespaces),
                String(trimmed[trimmed.index(after: equals)...]).trimmingCharacters(in: .whitespaces))
    }

    /// The query of a path as name/value pairs, percent-decoded where valid.
    private static func queryString(_ path: String) -> [HAR.NameValue] {
        guard let question = path.firstIndex(of: "?") else { return [] }
        let query = path[path.index(after: question)...].split(separator: "#", maxSplits: 1).first ?? ""
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String { s.removingPercentEncoding ?? String(s) }
            return HAR.NameValue(name: decode(parts[0]), value: parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    private static func postData(_ body: StoredBody, _ message: RecordedMessage) -> HAR.PostData {
        let decoded = decodedBody(body, message)
        return HAR.PostData(mimeType: message.firstValue("content-type") ?? "", text: decoded.text,
                            _encoding: decoded.isBase64 ? "base64" : nil, _truncated: body.truncated ? true : nil,
                            _decodingError: decoded.error)
    }
}
