import Evidence
import Foundation

/// How `intact proxy` logs each finished exchange on standard error.
public enum ExchangeLogFormat: String, Hashable, Sendable, CaseIterable {
    /// `d1.2 GET https://host:443/path 200 1024 B 3.2 ms`, plus `error: …` when it broke.
    case text
    /// One JSON object per line: `exchange`, `method`, `url`, `status`, `bytes`, `ms`, `error`.
    case json
}

/// The log line of one exchange, from its record: what the client asked
/// (method, URL), what it got (status, body bytes sent back), how long it
/// took from the request head to the end of the response, and the error.
public struct ExchangeLogLine: Hashable, Sendable, Encodable {
    public var exchange: String
    public var method: String
    public var url: String
    /// The status sent to the client; nil when none was.
    public var status: Int?
    /// Body bytes sent to the client.
    public var bytes: Int
    /// Milliseconds from the request head to the end of the response (or of what there was).
    public var ms: Double
    public var step: String?
    public var error: String?

    public init(_ record: ExchangeRecord) {
        let leg = record.leg(.downstream) ?? record.legs.first
        let request = leg?.request
        let response = leg?.response
        exchange = record.exchangeID
        method = request?.method ?? "-"
        url = ExchangeLogLine.url(of: request)
        status = response?.status
        bytes = response?.digest.body.length ?? 0
        let start = request?.timings.start ?? response?.timings.start
        let end = response?.timings.end ?? response?.timings.headersDone ?? request?.timings.end
        if let start, let end { ms = max(0, start.milliseconds(until: end)) } else { ms = 0 }
        step = record.authFlowStep
        error = record.error.map { "\($0.location): \($0.message)" }
    }

    /// The line, without its newline.
    public func rendered(_ format: ExchangeLogFormat) -> String {
        switch format {
        case .text:
            var line = "\(exchange) \(method) \(url) \(status.map(String.init) ?? "-") \(bytes) B "
                + String(format: "%.1f ms", ms)
            if let step { line += " [\(step)]" }
            if let error { line += " error: \(error)" }
            return line
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            guard let data = try? encoder.encode(self) else { return "{}" }
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// `scheme://authority/path` (the `Host` field when the request had no
    /// authority), `host:port` for CONNECT, or `-` for no request.
    static func url(of request: RecordedMessage?) -> String {
        guard let request else { return "-" }
        if request.method == "CONNECT" { return request.authority ?? "-" }
        let authority = request.authority ?? request.firstValue("Host") ?? ""
        return "\(request.scheme ?? "http")://\(authority)\(request.path ?? "")"
    }
}
