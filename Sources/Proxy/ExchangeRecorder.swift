import Evidence
import HTTP

/// Builds the `ExchangeRecord` of one proxied exchange from its two legs:
/// downstream (the request as received from the client, the response as sent
/// back) and upstream (the request as sent to the server, the response as
/// received). The upstream leg exists once an upstream stream was assigned.
///
/// Owned by one `ExchangeFlow`, on its loop.
struct ExchangeRecorder {
    let id: ExchangeID
    let settings: RecordingSettings
    var downstream: LegRecorder
    var upstream: LegRecorder?
    /// The request's `Intact-Trace`, when it carried one.
    var traceID: String?

    init(id: ExchangeID, settings: RecordingSettings, downstream: LegRecorder) {
        self.id = id
        self.settings = settings
        self.downstream = downstream
    }

    var now: Timestamp { settings.clock() }

    /// Starts the upstream leg (on the connection the pool assigned).
    mutating func beginUpstream(connection: ConnectionID, tls: TLSDetails?) {
        upstream = LegRecorder(role: .upstream, connectionID: connection, tls: tls,
                               bodyStoreLimit: settings.bodyStoreLimit)
    }

    /// The finished record. Called once.
    mutating func finish(error: ProxyError?) -> ExchangeRecord {
        let time = now
        var legs = [downstream.finish(redaction: settings.redaction, at: time)]
        if var upstream {
            legs.append(upstream.finish(redaction: settings.redaction, at: time))
        }
        return ExchangeRecord(exchangeID: id.description, traceID: traceID, tap: settings.tap, legs: legs,
                              error: error?.failure)
    }
}
