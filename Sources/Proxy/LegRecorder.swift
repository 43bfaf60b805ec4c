import Evidence
import HTTP
import TLS

/// One leg of an exchange as it is being recorded: the connection and stream
/// it travelled on, the TLS session, and its two messages.
struct LegRecorder {
    let role: ExchangeRecord.Leg.Role
    var connectionID: ConnectionID
    /// The HTTP/2 stream id, when the leg is HTTP/2.
    var streamID: Int?
    var tls: TLSDetails?
    var request: MessageRecorder
    var response: MessageRecorder

    init(role: ExchangeRecord.Leg.Role, connectionID: ConnectionID, streamID: Int? = nil, tls: TLSDetails?,
         bodyStoreLimit: Int) {
        self.role = role
        self.connectionID = connectionID
        self.streamID = streamID
        self.tls = tls
        request = MessageRecorder(bodyStoreLimit: bodyStoreLimit)
        response = MessageRecorder(bodyStoreLimit: bodyStoreLimit)
    }

    /// The leg as the record keeps it. Called once.
    mutating func finish(redaction: RedactionPolicy, at time: Timestamp) -> ExchangeRecord.Leg {
        ExchangeRecord.Leg(role: role, connectionID: connectionID.description, streamID: streamID, tls: tls,
                           request: request.finish(redaction: redaction, at: time),
                           response: response.finish(redaction: redaction, at: time))
    }
}
