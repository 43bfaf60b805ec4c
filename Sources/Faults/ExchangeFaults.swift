import HTTP

/// The faults of one exchange, driven by the proxy: each request part goes
/// through `request(_:)`, each response part through `response(_:)`, and
/// the proxy carries out the outputs in order.
///
/// Invariants: used from the exchange's queue only (it is a value; the
/// engine it refers to is thread-safe). Request-leg rules were decided by
/// `FaultEngine.begin`; response-leg rules are decided when the final
/// response head arrives (1xx heads pass untouched). After a leg outputs
/// `.answer`, `.fail` or a reset/close/stall, its later parts produce no
/// output, and after the request leg answers or cuts, the proxy does not ask
/// the server, so `response(_:)` is not called.
///
/// Body changes keep framing consistent: with `Transfer-Encoding` nothing
/// changes; otherwise a `Content-Length` is set to the new length when it is
/// known before the body (replace, truncate with a declared length,
/// re-chunk) or after it (buffering actions hold the head until the end),
/// and removed when it is not known (truncate without a declared length), so
/// the codec frames the body.
public struct ExchangeFaults: Sendable {
    public let context: ExchangeContext
    private let engine: FaultEngine
    private let requestFirings: [Firing]
    private var requestLeg = LegMachine<HTTPRequestHead>(leg: .request)
    private var responseLeg = LegMachine<HTTPResponseHead>(leg: .response)

    init(engine: FaultEngine, context: ExchangeContext, requestFirings: [Firing]) {
        self.engine = engine
        self.context = context
        self.requestFirings = requestFirings
    }

    /// Every fault applied so far, request leg first, for the exchange record.
    public var applied: [AppliedFault] { requestLeg.applied + responseLeg.applied }

    /// The next request part; returns what to do instead of (or as well as) forwarding it.
    public mutating func request(_ part: HTTPRequestPart) -> [RequestFaultOutput] {
        guard case .head(let head) = part, requestLeg.isAwaitingHead else { return requestLeg.receive(part) }
        let plan = LegPlan(head: head, leg: .request, firings: requestFirings, bodyAllowed: true,
                           bufferLimit: engine.bufferLimit, variables: TemplateVariables(request: context.request))
        return requestLeg.start(plan)
    }

    /// The next response part; returns what to do instead of (or as well as) forwarding it.
    public mutating func response(_ part: HTTPResponsePart) -> [ResponseFaultOutput] {
        guard case .head(let head) = part, responseLeg.isAwaitingHead else { return responseLeg.receive(part) }
        if head.isInformational && head.status != 101 { return [.forward(part)] }
        let request = context.request
        let step = context.step(answeredBy: head)
        let firings = engine.fire(leg: .response) {
            $0.match.holds(step: step, request: request, fields: head.fields, status: head.status.code)
        }
        let bodyAllowed = request.method.rawValue.uppercased() != "HEAD" && !head.isInformational
            && head.status != 204 && head.status != 304
        let plan = LegPlan(head: head, leg: .response, firings: firings, bodyAllowed: bodyAllowed,
                           bufferLimit: engine.bufferLimit, variables: TemplateVariables(request: request))
        return responseLeg.start(plan)
    }
}
