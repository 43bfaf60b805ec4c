import Foundation
import Evidence
import Hashing
import HTTP

/// Builds the recordings of a whole path (client, intermediaries, server)
/// for the verifier tests: every point sees the same messages unless an
/// alteration says otherwise, so each test states exactly the difference it
/// is about.
struct VerificationScenario {
    /// One exchange as the client sends it and the server answers it.
    struct Exchange {
        var request: HTTPRequestHead
        var requestBody: [UInt8] = []
        var response: HTTPResponseHead
        var responseBody: [UInt8] = []
        /// Sent as `Intact-Trace` and recorded as the trace id; nil for none.
        var trace: String?
        var step: String?
    }

    /// The messages one point saw of one exchange; nil where it saw none.
    struct View {
        var request: HTTPRequestHead?
        var requestBody: [UInt8]
        var response: HTTPResponseHead?
        var responseBody: [UInt8]
        var requestComplete = true
        var responseComplete = true
    }

    /// Where an alteration applies.
    struct Place {
        let tap: String
        let leg: ExchangeRecord.Leg.Role
        /// The exchange's index in `exchanges`.
        let exchange: Int
    }

    var exchanges: [Exchange]
    /// Tap names and kinds, client side first.
    var taps: [(name: String, kind: TapSummary.Kind)] = [("client", .client), ("proxy-a", .intermediary), ("server", .server)]
    var redaction = RedactionPolicy()
    /// What every message is digested with; nil for the redaction's key, as a tap does.
    var digests: DigestFunction?
    /// Changes what one point saw.
    var alter: (Place, inout View) -> Void = { _, _ in }
    /// Adds faults or an error to a tap's record.
    var decorate: (_ tap: String, _ exchange: Int, inout ExchangeRecord) -> Void = { _, _, _ in }

    init(_ exchanges: [Exchange]) {
        self.exchanges = exchanges
    }

    /// The recordings, in tap order.
    func recordings() -> [Recording] {
        taps.enumerated().map { tapIndex, tap in
            let roles: [ExchangeRecord.Leg.Role]
            switch tap.kind {
            case .client: roles = [.client]
            case .intermediary: roles = [.downstream, .upstream]
            case .server: roles = [.server]
            }
            var records: [ExchangeRecord] = []
            for (index, exchange) in exchanges.enumerated() {
                var legs: [ExchangeRecord.Leg] = []
                for (roleIndex, role) in roles.enumerated() {
                    var view = View(request: exchange.request, requestBody: exchange.requestBody,
                                    response: exchange.response, responseBody: exchange.responseBody)
                    if let trace = exchange.trace { view.request?.fields.append(ExchangeRecord.traceFieldName, trace) }
                    alter(Place(tap: tap.name, leg: role, exchange: index), &view)
                    guard view.request != nil || view.response != nil else { continue }
                    let time = 1_700_000_000_000 + Double(index) * 1000 + Double(tapIndex * 10 + roleIndex)
                    legs.append(leg(role, view, connection: "\(tap.name)-\(role.rawValue)-\(index)", time: time))
                }
                guard !legs.isEmpty else { continue }
                let trace = legs.lazy.compactMap { $0.request?.firstValue(ExchangeRecord.traceFieldName) }.first
                var record = ExchangeRecord(exchangeID: "\(tap.name)-\(index)", traceID: trace, tap: tap.name,
                                            legs: legs, authFlowStep: exchange.step)
                decorate(tap.name, index, &record)
                records.append(record)
            }
            let mode = tap.kind == .intermediary ? "reverse" : tap.kind.rawValue
            let header = RecordingHeader(toolVersion: "0.1.0-test", tap: tap.name, mode: mode, redaction: redaction,
                                         digests: digests.map(RecordingHeader.Digests.init),
                                         started: Timestamp(millisecondsSince1970: 1_700_000_000_000))
            return Recording(path: "\(tap.name).jsonl", header: header, records: records)
        }
    }

    /// Writes a recording to `path` as a tap would, through `RecordingWriter`.
    static func write(_ recording: Recording, to path: String) throws {
        let writer = try RecordingWriter(path: path, header: recording.header)
        for record in recording.records { writer.append(record) }
        if let error = writer.closeAndWait() { throw error }
    }

    private func leg(_ role: ExchangeRecord.Leg.Role, _ view: View, connection: String, time: Double) -> ExchangeRecord.Leg {
        let request = view.request.map {
            VerificationScenario.request($0, body: view.requestBody, complete: view.requestComplete, time: time,
                                         redaction: redaction, digests: digests)
        }
        let response = view.response.map {
            VerificationScenario.response($0, body: view.responseBody, complete: view.responseComplete, time: time + 500,
                                          redaction: redaction, digests: digests)
        }
        return ExchangeRecord.Leg(role: role, connectionID: connection, request: request, response: response)
    }

    // MARK: Messages

    static func request(_ head: HTTPRequestHead, body: [UInt8] = [], complete: Bool = true, time: Double,
                        redaction: RedactionPolicy = RedactionPolicy(), digests: DigestFunction? = nil) -> RecordedMessage {
        let digests = digests ?? redaction.digests
        let wire: HeadDigest.WireForm
        if head.version == .http2 {
            wire = .http2Request(head)
        } else {
            wire = .http1(head: rawHead(["\(head.method) \(head.path) \(head.version.rawValue)"] + head.fields.map(\.description)))
        }
        let digest = MessageDigest(head: HeadDigest(request: head, wire: wire, connectionScheme: "https", using: digests),
                                   body: bodyDigest(body, digests))
        return RecordedMessage(request: head, connectionScheme: "https", digest: digest, complete: complete,
                               timings: timings(time), redaction: redaction)
    }

    static func response(_ head: HTTPResponseHead, body: [UInt8] = [], complete: Bool = true, time: Double,
                         redaction: RedactionPolicy = RedactionPolicy(), digests: DigestFunction? = nil) -> RecordedMessage {
        let digests = digests ?? redaction.digests
        let wire: HeadDigest.WireForm
        if head.version == .http2 {
            wire = .http2Response(head)
        } else {
            wire = .http1(head: rawHead(["\(head.version.rawValue) \(head.status) \(head.reason)"] + head.fields.map(\.description)))
        }
        let digest = MessageDigest(head: HeadDigest(response: head, wire: wire, using: digests), body: bodyDigest(body, digests))
        return RecordedMessage(response: head, digest: digest, complete: complete, timings: timings(time), redaction: redaction)
    }

    private static func rawHead(_ lines: [String]) -> [UInt8] {
        Array(lines.map { $0 + "\r\n" }.joined().utf8)
    }

    private static func bodyDigest(_ body: [UInt8], _ digests: DigestFunction) -> BodyDigest {
        var digester = BodyDigester(using: digests)
        digester.update(body)
        return digester.finish()
    }

    private static func timings(_ time: Double) -> MessageTimings {
        MessageTimings(start: Timestamp(millisecondsSince1970: time), headersDone: Timestamp(millisecondsSince1970: time + 1),
                       end: Timestamp(millisecondsSince1970: time + 2))
    }

    // MARK: Heads

    /// `GET path` over HTTP/1.1 to app.test, with a Host field and any extra fields.
    static func get(_ path: String, _ extra: [(String, String)] = []) -> HTTPRequestHead {
        var fields: HTTPFields = ["Host": "app.test", "User-Agent": "intact-test"]
        for (name, value) in extra { fields.append(name, value) }
        return HTTPRequestHead(method: "GET", authority: "app.test", path: path, version: .http1_1, fields: fields)
    }

    static func post(_ path: String, _ extra: [(String, String)] = []) -> HTTPRequestHead {
        var head = get(path, [("Content-Type", "application/x-www-form-urlencoded")] + extra)
        head.method = "POST"
        return head
    }

    static func ok(_ extra: [(String, String)] = [], status: Int = 200, length: Int = 0) -> HTTPResponseHead {
        var fields: HTTPFields = ["Content-Type": "application/json", "Content-Length": String(length)]
        for (name, value) in extra { fields.append(name, value) }
        return HTTPResponseHead(status: HTTPStatus(status), version: .http1_1, fields: fields)
    }

    /// A simple exchange: `GET path` answered 200 with a small JSON body.
    static func exchange(_ path: String, trace: String? = nil, step: String? = nil, method: String = "GET",
                         body: String = "", requestFields: [(String, String)] = [],
                         responseFields: [(String, String)] = []) -> Exchange {
        var request = get(path, requestFields)
        request.method = HTTPMethod(method)
        let responseBody = Array("{\"path\":\"\(path)\"}".utf8)
        return Exchange(request: request, requestBody: Array(body.utf8),
                        response: ok(responseFields, length: responseBody.count), responseBody: responseBody,
                        trace: trace, step: step)
    }

    /// The same request as HTTP/2 carries it: lowercase names, no Host, the
    /// `Cookie` split into crumbs.
    static func asHTTP2(_ head: HTTPRequestHead) -> HTTPRequestHead {
        var fields = HTTPFields()
        for field in head.fields where field.lowercasedName != "host" {
            if field.lowercasedName == "cookie" {
                for crumb in field.value.split(separator: ";") {
                    fields.append("cookie", crumb.trimmingCharacters(in: .whitespaces))
                }
            } else {
                fields.append(field.lowercasedName, field.value)
            }
        }
        return HTTPRequestHead(method: head.method, scheme: "https", authority: head.authority, path: head.path,
                               version: .http2, fields: fields)
    }

    static func asHTTP2(_ head: HTTPResponseHead) -> HTTPResponseHead {
        var fields = HTTPFields()
        for field in head.fields { fields.append(field.lowercasedName, field.value) }
        return HTTPResponseHead(status: head.status, reason: "", version: .http2, fields: fields)
    }
}
