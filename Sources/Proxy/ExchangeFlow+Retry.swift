import Evidence
import HTTP

/// What an exchange keeps to send its request again when the upstream never
/// processed it: the head and framing it opened the upstream stream with,
/// and the body parts sent on the current attempt while they stay within
/// `bodyLimit` (beyond it the body is no longer held in full, and a failure
/// is final). One retry per exchange after a likely-unprocessed failure, up
/// to four while every failure was certainly unprocessed, each on a fresh
/// stream from the pool (the connection that sent GOAWAY or closed takes no
/// new stream).
struct UpstreamReplay {
    /// The most body bytes held for a resend.
    static let bodyLimit = 64 * 1024
    /// Methods whose request may be sent again when it was only likely, not
    /// certainly, unprocessed (RFC 9110 §9.2.2).
    static let idempotentMethods: Set<HTTPMethod> = [.get, .head, .options, .trace, .put, .delete]
    /// The most attempts per exchange after a failure that only likely went
    /// unprocessed (a reused HTTP/1.1 connection closed unanswered).
    static let maximumAttempts = 2
    /// The most attempts per exchange while each failure certainly went
    /// unprocessed (above a GOAWAY's last stream, REFUSED_STREAM: RFC 9113
    /// §8.7). A server that serves a fixed number of requests per connection
    /// (nginx `keepalive_requests`) refuses every stream beyond it, and under a
    /// burst wider than that number the fresh connection a retry goes to fills
    /// up and refuses some of them again.
    static let maximumUnprocessedAttempts = 5

    /// The head the upstream stream was opened with, where it went and its body framing.
    private(set) var opened: (target: UpstreamTarget, head: HTTPRequestHead, framing: HTTP1Framing)?
    /// The parts sent on the current attempt; nil once the body outgrew `bodyLimit`.
    private(set) var sentParts: [HTTPRequestPart]? = []
    private var heldBytes = 0
    private(set) var attempts = 0

    /// The request head is on its way upstream: a new attempt starts.
    mutating func opening(_ target: UpstreamTarget, head: HTTPRequestHead, framing: HTTP1Framing) {
        opened = (target, head, framing)
        sentParts = []
        heldBytes = 0
        attempts += 1
    }

    /// A body part (or the end) went upstream on the current attempt.
    mutating func sent(_ part: HTTPRequestPart) {
        guard var parts = sentParts else { return }
        if case .body(let chunk) = part { heldBytes += chunk.count }
        guard heldBytes <= Self.bodyLimit else {
            sentParts = nil
            return
        }
        parts.append(part)
        sentParts = parts
    }

    /// Whether a request failing with `problem` may be sent again.
    func allows(_ problem: ProxyError) -> Bool {
        guard let opened, sentParts != nil else { return false }
        switch problem.notProcessed {
        case .certainly?: return attempts < Self.maximumUnprocessedAttempts
        case .ifIdempotent?: return attempts < Self.maximumAttempts && Self.idempotentMethods.contains(opened.head.method)
        case nil: return false
        }
    }
}

extension ExchangeFlow {
    /// Sends the request again when the upstream failed without processing
    /// it, nothing of the response reached the client, and the request is
    /// still held in full: the failed attempt is noted in the record, the
    /// request goes back to `.opening` with what was sent, and a fresh
    /// stream is asked for. Returns false (doing nothing) otherwise.
    mutating func retryUpstream(_ problem: ProxyError, _ io: any ExchangeActions) -> Bool {
        guard replay.allows(problem), client == .connected, case .awaitingHead = responseLeg,
              let opened = replay.opened else { return false }
        let resend: [HTTPRequestPart]
        switch requestLeg {
        case .opening(let pending, _): resend = pending
        case .forwarding, .sent: resend = replay.sentParts ?? []
        case .awaitingHead, .discarding: return false
        }
        recorder.abandonAttempt(problem)
        let bodyless = !opened.framing.allowsBody
        requestLeg = .opening(pending: bodyless ? [] : resend, bodyless: bodyless)
        upstream = .opening
        replay.opening(opened.target, head: opened.head, framing: opened.framing)
        io.perform(.openUpstream(opened.target, head: opened.head, framing: opened.framing), for: id)
        return true
    }
}
