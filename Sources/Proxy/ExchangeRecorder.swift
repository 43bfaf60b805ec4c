import Evidence
import HTTP

/// Builds the `ExchangeRecord` of one proxied exchange from its two legs:
/// downstream (the request as received from the client, the response as sent
/// back) and upstream (the request as sent to the server, the response as
/// received). The upstream leg exists once an upstream stream was assigned.
///
/// Owned by one `ExchangeFlow`, on its loop. Optional properties are spelled
/// `Optional<…>` and set in the initialiser (see `LegRecorder`).
struct ExchangeRecorder {
    let id: ExchangeID
    let settings: RecordingSettings
    var downstream: LegRecorder
    var upstream: Optional<LegRecorder>
    /// The request's `Intact-Trace`, when it carried one.
    var traceID: Optional<String>
    /// Failed upstream attempts before the current one (see `ExchangeRecord.retries`).
    var retries: [ExchangeRecord.Failure] = []

    init(id: ExchangeID, settings: RecordingSettings, downstream: LegRecorder) {
        self.id = id
        self.settings = settings
        self.downstream = downstream
        upstream = nil
        traceID = nil
    }

    var now: Timestamp { settings.clock() }

    /// Drops the upstream leg of an attempt that failed before the upstream
    /// processed the request, keeping why (and on which connection) in `retries`.
    mutating func abandonAttempt(_ problem: ProxyError) {
        var failure = problem.failure
        if let connection = upstream?.connectionID { failure.location += " (connection \(connection))" }
        retries.append(failure)
        upstream = nil
    }

    /// Starts the upstream leg (on the connection the pool assigned).
    mutating func beginUpstream(connection: ConnectionID, tls: TLSDetails?) {
        upstream = LegRecorder(role: .upstream, connectionID: connection, tls: tls,
                               bodyStoreLimit: settings.bodyStoreLimit, digests: settings.contentDigests,
                               headMemos: downstream.headMemos)
    }

    /// The exchange let go of its upstream before the leg completed: notes
    /// why on the leg, which starts without a connection when the pool had
    /// not handed one over yet (an upstream attempt had begun all the same).
    mutating func breakUpstream(_ reason: String) {
        if upstream == nil {
            upstream = LegRecorder(role: .upstream, connectionID: nil, tls: nil, bodyStoreLimit: settings.bodyStoreLimit,
                                   digests: settings.contentDigests, headMemos: downstream.headMemos)
        }
        upstream?.broken = reason
    }

    /// The finished record. Called once.
    mutating func finish(error: ProxyError?) -> ExchangeRecord {
        let time = now
        if upstream != nil { finishForwardedBodiesOnce() }
        var legs: [ExchangeRecord.Leg] = []
        legs.reserveCapacity(2)  // one allocation for both legs
        // A head forwarded with the very field list it came with is recorded
        // once: the other leg takes the recorded fields (one array, shared).
        let sameRequestFields = upstream?.request.fieldsShareStorage(with: downstream.request) == true
        let sameResponseFields = upstream?.response.fieldsShareStorage(with: downstream.response) == true
        let first = downstream.finish(redaction: settings.redaction, at: time)
        // Read from the local leg, not from `legs` (whose subscript would copy the whole leg).
        let requestFields = sameRequestFields ? first.request?.fields : nil
        let responseFields = sameResponseFields ? first.response?.fields : nil
        legs.append(consume first)  // moved, not copied (a copy retains every field)
        if upstream != nil {
            // In place, not a copy of the leg.
            legs.append(upstream!.finish(redaction: settings.redaction, at: time, requestFields: requestFields,
                                         responseFields: responseFields))
        }
        return ExchangeRecord(exchangeID: id.description, traceID: traceID, tap: settings.tap, legs: legs,
                              error: error?.failure, retries: retries.isEmpty ? nil : retries)
    }

    /// A body forwarded as it came is digested as it passes once, for both
    /// legs (`MessageRecorder.recordBody(_:following:)`); its digest is also
    /// finished once: on the leg it came in on (the client's request, the
    /// server's response), and taken by the other leg when it is the same
    /// body (`adoptFinishedBody`). Finishing a SHA-256 costs as much as
    /// hashing a kilobyte.
    private mutating func finishForwardedBodiesOnce() {
        downstream.request.finishBody()
        upstream!.request.adoptFinishedBody(of: downstream.request)
        upstream!.response.finishBody()
        downstream.response.adoptFinishedBody(of: upstream!.response)
    }
}
