import Evidence
import Hashing
import HTTP
import TLS

/// One leg of an exchange as it is being recorded: the connection and stream
/// it travelled on, the TLS session, and its two messages.
///
/// Optional properties are spelled `Optional<…>` and set in the
/// initialiser: one written `T?` is set to nil first, and Swift then copies
/// the whole leg (both messages' recorders) out of the initialiser.
struct LegRecorder {
    let role: ExchangeRecord.Leg.Role
    /// Nil for an upstream leg that never got a connection (recorded as `none`).
    var connectionID: Optional<ConnectionID>
    /// The HTTP/2 stream id, when the leg is HTTP/2.
    var streamID: Optional<Int>
    var tls: Optional<TLSDetails>
    var request: MessageRecorder
    var response: MessageRecorder
    /// Interim responses (1xx other than 101) as they crossed, in order.
    private var interim: [MessageRecorder] = []
    /// Statuses of interim responses not sent on this leg (an HTTP/1.0 client gets none).
    private var interimWithheld: [Int] = []
    /// After a 101: the bytes relayed each way on this leg.
    var relayed: Optional<RelayedStreams>
    /// How this leg's messages translate the other leg's beyond the RFC field mappings.
    var translation: Optional<String>
    /// Why the exchange let go of the leg before it completed (`ExchangeRecord.Leg.broken`).
    var broken: Optional<String>
    /// What every message of the leg is digested with (the recording's); nil
    /// takes no digests (`RecordingSettings.contentDigests`).
    private let digests: DigestFunction?
    /// The head digests shared with the other leg (`HeadDigestMemos`).
    let headMemos: HeadDigestMemos

    /// - Parameter headMemos: the downstream leg's, for an upstream leg; for
    ///   a downstream leg its connection's, or nil to make its own.
    init(role: ExchangeRecord.Leg.Role, connectionID: ConnectionID?, streamID: Int? = nil, tls: TLSDetails?,
         bodyStoreLimit: Int, digests: DigestFunction?, headMemos: HeadDigestMemos? = nil) {
        self.role = role
        self.connectionID = connectionID
        self.streamID = streamID
        self.tls = tls
        relayed = nil
        translation = nil
        broken = nil
        self.digests = digests
        let memos = headMemos ?? HeadDigestMemos()
        self.headMemos = memos
        // The request crosses downstream first, the response upstream first: that leg keeps its memo
        // (and, with memos kept across exchanges, the other leg too, for the next exchange).
        request = MessageRecorder(bodyStoreLimit: bodyStoreLimit, digests: digests,
                                  headMemo: (memos, keeps: memos.acrossExchanges || role == .downstream))
        response = MessageRecorder(bodyStoreLimit: bodyStoreLimit, digests: digests,
                                   headMemo: (memos, keeps: memos.acrossExchanges || role == .upstream))
    }

    /// An interim response head that crossed the leg (it has no body).
    mutating func recordInterim(_ head: HTTPResponseHead, wire: HeadDigest.WireForm, at time: Timestamp) {
        var message = MessageRecorder(bodyStoreLimit: 0, digests: digests)
        message.recordResponse(head, wire: wire, at: time)
        message.recordEnd(trailers: nil, at: time)
        interim.append(message)
    }

    /// An interim response that was not sent on this leg (RFC 9110 §15.2: none to an HTTP/1.0 client).
    mutating func recordInterimWithheld(_ head: HTTPResponseHead) {
        interimWithheld.append(head.status.code)
    }

    /// The leg as the record keeps it. Called once: the TLS details move
    /// into the record (`tls` is nil afterwards) rather than being copied.
    /// `requestFields`, `responseFields`: the message's fields as recorded
    /// by the other leg, when they are the same list (`MessageRecorder.fieldsShareStorage`).
    mutating func finish(redaction: RedactionPolicy, at time: Timestamp, requestFields: [RecordedField]? = nil,
                         responseFields: [RecordedField]? = nil) -> ExchangeRecord.Leg {
        // One initialiser call with every value: a leg changed after it is made is copied whole to be returned.
        ExchangeRecord.Leg(role: role, connectionID: connectionID?.description ?? "none", streamID: streamID,
                           tls: tls.take(),
                           request: request.finish(redaction: redaction, at: time, recordedFields: requestFields),
                           response: response.finish(redaction: redaction, at: time, recordedFields: responseFields),
                           interimResponses: finishInterim(redaction: redaction, at: time),
                           interimWithheld: interimWithheld.isEmpty ? nil : interimWithheld,
                           relayed: relayed, translation: translation, broken: broken)
    }

    /// The interim responses as the record keeps them; nil when there were none.
    private mutating func finishInterim(redaction: RedactionPolicy, at time: Timestamp) -> [RecordedMessage]? {
        guard !interim.isEmpty else { return nil }
        var finished: [RecordedMessage] = []
        finished.reserveCapacity(interim.count)
        for index in interim.indices {
            if let message = interim[index].finish(redaction: redaction, at: time) { finished.append(message) }
        }
        return finished.isEmpty ? nil : finished
    }
}
