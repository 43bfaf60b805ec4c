import HTTP

/// What the fired rules do to one message, worked out when its head arrives:
/// the edited head, network commands that come first, how the message ends
/// up (forwarded, answered, cut), its body stages and a later reset.
struct LegPlan<Head: FaultableHead> {
    /// How the message leaves the proxy.
    enum Disposition {
        /// Forwarded, with the body through `body`.
        case forward
        /// Replaced by a canned response.
        case answer(CannedResponse)
        /// Never forwarded: the connection is reset, closed or stalls.
        case cut(NetworkCommand)
    }

    var head: Head
    var before: [NetworkCommand] = []
    var disposition: Disposition = .forward
    var body: BodyPipeline
    /// A reset after the head or after some body bytes, at most one, with the rule that asked for it.
    var resetLater: (point: ResetPoint, rule: String)?
    var applied: [AppliedFault] = []

    /// Applies `firings`' actions in order (rules in file order, then each
    /// rule's actions). The first action that answers or cuts the message
    /// ends the walk: later actions would act on a message that is not sent.
    ///
    /// - Parameters:
    ///   - bodyAllowed: false for messages that carry no body (responses to
    ///     HEAD, 1xx, 204, 304); body actions then do nothing.
    ///   - variables: the request's values for `${authority}` and `${target}`
    ///     in templates (`TemplateVariables`); nil leaves templates as written.
    init(head: Head, leg: FaultLeg, firings: [Firing], bodyAllowed: Bool, bufferLimit: Int, variables: TemplateVariables? = nil) {
        self.head = head
        body = BodyPipeline(limit: bufferLimit)
        walk: for var firing in firings {
            for written in firing.rule.actions {
                let action = variables.map { written.expanded(with: $0) } ?? written
                let rule = firing.rule.name
                func record(_ change: String) {
                    applied.append(AppliedFault(rule: rule, action: action.kind, leg: leg, change: change))
                }
                func stage(_ transform: BodyStage.Transform) {
                    guard bodyAllowed else { return }
                    body.stages.append(BodyStage(rule: rule, action: action.kind, leg: leg, transform: transform))
                }
                switch action {
                case .replaceBody(let replacement, let contentType):
                    guard bodyAllowed else { continue }
                    stage(.replace(body: replacement, dropped: 0))
                    if let contentType { self.head.fields.set("Content-Type", contentType) }
                case .regexBody(let regex, let template):
                    stage(.buffer(.regex(regex, template: template), held: []))
                case .truncateBody(let bytes):
                    stage(.truncate(limit: bytes, seen: 0))
                case .rechunkBody(let bytes):
                    stage(.rechunk(size: bytes, pending: [], chunks: 0))
                case .gzipBody:
                    guard bodyAllowed else { continue }
                    if let encoding = self.head.fields["Content-Encoding"] {
                        record("not compressed: the body is already \(encoding)-encoded")
                        continue
                    }
                    stage(.buffer(.gzip, held: []))
                    self.head.fields.append("Content-Encoding", "gzip")
                case .rewriteURLs(let rewrite, let places):
                    if case .changed(let change) = self.head.applyHeadAction(action) { record(change) }
                    if places.contains(.body) { stage(.buffer(.urls(rewrite), held: [])) }
                case .answer(let canned):
                    disposition = .answer(canned)
                    record("answered instead of the server: \(canned.summary)")
                    break walk
                case .gate(let gate):
                    guard !LegPlan.passes(self.head.fields, gate.requirement) else { continue }
                    let denial = gate.denialResponse
                    disposition = .answer(denial)
                    record("\(LegPlan.describe(gate.requirement)) missing: answered \(denial.summary)")
                    break walk
                case .delay(let ms, let jitter):
                    let drawn = jitter == 0 ? ms : max(0, ms - jitter + Int(firing.generator.next() % UInt64(2 * jitter + 1)))
                    before.append(.delay(.milliseconds(drawn)))
                    record("delayed \(drawn) ms")
                case .throttle(let rate):
                    before.append(.throttle(bytesPerSecond: rate))
                    record("limited to \(rate) bytes/s")
                case .reset(.beforeHeaders):
                    disposition = .cut(.reset(.beforeHeaders))
                    record("connection reset before the headers")
                    break walk
                case .reset(let point):
                    if resetLater == nil { resetLater = (point, rule) }
                case .closeSilently:
                    disposition = .cut(.closeSilently)
                    record("connection closed without an answer")
                    break walk
                case .stall:
                    disposition = .cut(.stall)
                    record("stalled: no answer, connection left open")
                    break walk
                case .requireClientCertificate, .presentUnknownCA:
                    continue // Connection rules only (FaultRule.problem); never fired for a leg.
                default:
                    switch self.head.applyHeadAction(action) {
                    case .changed(let change): record(change)
                    case .unchanged, .notApplicable: break
                    }
                }
            }
        }
        if case .forward = disposition, !body.stages.isEmpty, !body.buffers {
            self.head.fields.frame(bodyLength: body.outputLength(input: head.fields.contentLength))
        }
    }

    static func passes(_ fields: HTTPFields, _ requirement: Gate.Requirement) -> Bool {
        switch requirement {
        case .header(let name): return fields.contains(name)
        case .cookie(let name): return fields.values("Cookie").contains { CookieCrumbs($0).contains(name) }
        }
    }

    static func describe(_ requirement: Gate.Requirement) -> String {
        switch requirement {
        case .header(let name): return "field \(name)"
        case .cookie(let name): return "cookie \(name)"
        }
    }
}
