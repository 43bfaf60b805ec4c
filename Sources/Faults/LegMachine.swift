import HTTP

/// One message's way through the engine: a state machine fed the message's
/// parts in order, returning what the proxy does with each.
///
/// Invariant: parts arrive as the HTTP model promises (one head, body
/// chunks, one end); a part out of that order produces no output.
struct LegMachine<Head: FaultableHead> {
    typealias Output = FaultOutput<HTTPPart<Head>>

    /// A reset still to come after some body bytes.
    struct Countdown {
        var remaining: Int
        let point: ResetPoint
        let rule: String
    }

    enum State {
        /// Nothing seen yet.
        case awaitingHead
        /// The head went on; body chunks go through the pipeline as they come.
        case streaming(BodyPipeline, Countdown?)
        /// The head waits for the whole body (a buffering stage), so its
        /// framing can be fixed and a failure can still be answered cleanly.
        case holding(Head, BodyPipeline, (point: ResetPoint, rule: String)?)
        /// Answered, cut or failed: later parts are swallowed.
        case discarding
        /// The end went on.
        case done
    }

    let leg: FaultLeg
    private(set) var state: State = .awaitingHead
    private(set) var applied: [AppliedFault] = []

    init(leg: FaultLeg) { self.leg = leg }

    var isAwaitingHead: Bool {
        if case .awaitingHead = state { return true }
        return false
    }

    /// Starts the message with its plan (made from its head).
    mutating func start(_ plan: LegPlan<Head>) -> [Output] {
        guard isAwaitingHead else { return [] }
        applied += plan.applied
        var out: [Output] = plan.before.map { .network($0) }
        switch plan.disposition {
        case .answer(let canned):
            out.append(.answer(canned.parts(version: plan.head.version)))
            state = .discarding
        case .cut(let command):
            out.append(.network(command))
            state = .discarding
        case .forward where plan.body.buffers:
            state = .holding(plan.head, plan.body, plan.resetLater)
        case .forward:
            out.append(.forward(.head(plan.head)))
            state = .streaming(plan.body, nil)
            out += afterHead(plan.resetLater, pipeline: plan.body)
        }
        return out
    }

    /// Takes the next part after the head.
    mutating func receive(_ part: HTTPPart<Head>) -> [Output] {
        switch (state, part) {
        case (.streaming(var pipeline, let countdown), .body(let chunk)):
            do throws(FaultFailure) {
                let chunks = try pipeline.feed(chunk)
                state = .streaming(pipeline, countdown)
                return sendBody(chunks)
            } catch {
                return fail(error)
            }
        case (.streaming(var pipeline, let countdown), .end(let trailers)):
            do throws(FaultFailure) {
                let (chunks, records) = try pipeline.finish()
                applied += records
                state = .streaming(pipeline, countdown)
                var out = sendBody(chunks)
                guard case .streaming = state else { return out }
                out += finish(trailers)
                return out
            } catch {
                return fail(error)
            }
        case (.holding(let head, var pipeline, let reset), .body(let chunk)):
            do throws(FaultFailure) {
                _ = try pipeline.feed(chunk) // a buffering stage keeps everything until the end
                state = .holding(head, pipeline, reset)
                return []
            } catch {
                return fail(error)
            }
        case (.holding(var head, var pipeline, let reset), .end(let trailers)):
            do throws(FaultFailure) {
                let (chunks, records) = try pipeline.finish()
                applied += records
                head.fields.frame(bodyLength: chunks.reduce(0) { $0 + $1.count })
                var out: [Output] = [.forward(.head(head))]
                state = .streaming(BodyPipeline(limit: pipeline.limit), nil)
                out += afterHead(reset, pipeline: BodyPipeline(limit: pipeline.limit))
                out += sendBody(chunks)
                guard case .streaming = state else { return out }
                out += finish(trailers)
                return out
            } catch {
                return fail(error)
            }
        default:
            return []
        }
    }

    /// The countdown of the current streaming state.
    private var streamingCountdown: Countdown? {
        if case .streaming(_, let countdown) = state { return countdown }
        return nil
    }

    /// Right after the head went on: a reset after the headers happens now,
    /// a reset after N body bytes starts counting.
    private mutating func afterHead(_ reset: (point: ResetPoint, rule: String)?, pipeline: BodyPipeline) -> [Output] {
        guard let reset else { return [] }
        switch reset.point {
        case .afterBodyBytes(let n) where n > 0:
            state = .streaming(pipeline, Countdown(remaining: n, point: reset.point, rule: reset.rule))
            return []
        default:
            return cut(reset.point, rule: reset.rule)
        }
    }

    /// Forwards body chunks, honouring a pending reset countdown.
    private mutating func sendBody(_ chunks: [[UInt8]]) -> [Output] {
        guard case .streaming(let pipeline, var countdown) = state else { return [] }
        var out: [Output] = []
        for chunk in chunks {
            guard var c = countdown else { out.append(.forward(.body(chunk))); continue }
            if chunk.count < c.remaining {
                c.remaining -= chunk.count
                countdown = c
                out.append(.forward(.body(chunk)))
            } else {
                out.append(.forward(.body(Array(chunk.prefix(c.remaining)))))
                out += cut(c.point, rule: c.rule)
                return out
            }
        }
        state = .streaming(pipeline, countdown)
        return out
    }

    /// The end of a forwarded message; a reset still counting happens instead of the end.
    private mutating func finish(_ trailers: HTTPFields?) -> [Output] {
        if let c = streamingCountdown { return cut(c.point, rule: c.rule) }
        state = .done
        return [.forward(.end(trailers: trailers))]
    }

    private mutating func cut(_ point: ResetPoint, rule: String) -> [Output] {
        applied.append(AppliedFault(rule: rule, action: .reset, leg: leg, change: "connection reset \(point)"))
        state = .discarding
        return [.network(.reset(point))]
    }

    private mutating func fail(_ failure: FaultFailure) -> [Output] {
        applied.append(AppliedFault(rule: failure.rule, action: failure.action, leg: leg, change: "exchange failed: \(failure.reason)"))
        state = .discarding
        return [.fail(failure)]
    }
}
