import AuthFlow
import Evidence
import Foundation
import Hashing
import HTTP

/// One request on the mock server host, from its head to the end of the
/// response, with no I/O: it collects the body up to the server's limit,
/// says when to hand the request to `MockServer` — at the end of the body, or
/// as soon as the body passes the limit (the server then answers 413 without
/// reading the rest) — and records both messages as the server saw them.
///
/// Owned by one stream on its connection's loop.
struct ServerExchange {
    /// What the host does next.
    enum Action: Equatable {
        /// Keep reading the body.
        case readMore
        /// Hand this request to the mock server and send its answer.
        /// `requestComplete` is false when the body passed the limit: the
        /// host stops reading it (HTTP/1.1: closes after answering; HTTP/2:
        /// resets the stream after answering).
        case handle(MockRequest, requestComplete: Bool)
        /// The request was already handed over; ignore what follows.
        case ignore
    }

    private enum State {
        case receiving(body: [UInt8])
        case handedOver
    }

    private let head: HTTPRequestHead
    private let clientCertificateSubject: String?
    private let limit: Int
    private var state = State.receiving(body: [])
    private var request: MessageObservation
    private var recordedRequest: RecordedMessage?
    private var response: MessageObservation?
    /// What both messages are digested with (the recording's).
    private let digests: DigestFunction

    /// The `Intact-Trace` of the request, the key that pairs it across taps.
    var traceID: String? { ExchangeRecord.traceID(in: head.fields) }

    /// A request whose head arrived at `now`, `wire` as it crossed the wire;
    /// both messages are digested with `digests`.
    init(head: HTTPRequestHead, wire: HeadDigest.WireForm, connectionScheme: String, clientCertificateSubject: String?,
         limit: Int, storeLimit: Int, digests: DigestFunction, now: Timestamp) {
        self.head = head
        self.digests = digests
        self.clientCertificateSubject = clientCertificateSubject
        self.limit = limit
        request = MessageObservation(request: head, wire: wire, connectionScheme: connectionScheme,
                                     storeLimit: storeLimit, using: digests, start: now, headersDone: now)
    }

    /// A chunk of the request body.
    mutating func receiveBody(_ chunk: [UInt8], now: Timestamp, redaction: RedactionPolicy) -> Action {
        guard case .receiving(var body) = state else { return .ignore }
        request.append(chunk)
        body.append(contentsOf: chunk)
        guard body.count > limit else {
            state = .receiving(body: body)
            return .readMore
        }
        state = .handedOver
        recordedRequest = request.finish(complete: false, end: now, redaction: redaction)
        return .handle(MockRequest(head: head, body: body, clientCertificateSubject: clientCertificateSubject),
                       requestComplete: false)
    }

    /// The end of the request (with its trailers, if any).
    mutating func receiveEnd(trailers: HTTPFields?, now: Timestamp, redaction: RedactionPolicy) -> Action {
        guard case .receiving(let body) = state else { return .ignore }
        state = .handedOver
        recordedRequest = request.finish(trailers: trailers, end: now, redaction: redaction)
        return .handle(MockRequest(head: head, body: body, clientCertificateSubject: clientCertificateSubject),
                       requestComplete: true)
    }

    /// The response head went out at `now`, `wire` as it crossed the wire.
    mutating func sentResponseHead(_ head: HTTPResponseHead, wire: HeadDigest.WireForm, storeLimit: Int, now: Timestamp) {
        response = MessageObservation(response: head.travelled(as: wire), wire: wire, storeLimit: storeLimit,
                                      using: digests, start: now, headersDone: now)
    }

    /// A chunk of the response body went out.
    mutating func sentResponseBody(_ chunk: [UInt8]) {
        response?.append(chunk)
    }

    /// The exchange ended: the response was sent whole (`responseComplete`),
    /// or the stream or connection broke first. Returns both messages as a
    /// recording keeps them; a request that never ended is recorded incomplete.
    mutating func finish(responseComplete: Bool, now: Timestamp,
                         redaction: RedactionPolicy) -> (request: RecordedMessage, response: RecordedMessage?) {
        let recordedRequest = self.recordedRequest ?? request.finish(complete: false, end: now, redaction: redaction)
        self.recordedRequest = recordedRequest
        let recordedResponse = response?.finish(complete: responseComplete, end: now, redaction: redaction)
        response = nil
        return (recordedRequest, recordedResponse)
    }
}
