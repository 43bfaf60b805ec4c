import HTTP
import AuthFlow
import Synchronization

/// The fault engine: a set of rules and the state that `probability` and
/// `times` need. It does no I/O and reads no clock; the proxy calls it at its
/// hook points and carries out what it returns.
///
/// Randomness: each rule draws from its own xoshiro256** stream, seeded from
/// `seed` and the rule's name, so one rule's decisions do not shift when
/// another rule is added or the rules are reordered. A rule draws only when everything but probability
/// matched; a rule that fires draws once more to seed its own choices
/// (delay jitter). With exchanges handled one after the other, as in the
/// sign-in flow, the same seed and traffic give the same faults; with
/// concurrent connections the draws go to exchanges in the order the proxy
/// asks.
///
/// Thread safety: rule state sits behind a mutex, so one engine serves every
/// connection; what `begin` returns belongs to one exchange and is driven
/// from that exchange's queue only.
public final class FaultEngine: Sendable {
    /// The default most a buffering body action holds: 1 MiB.
    public static let defaultBufferLimit = 1 << 20

    public let rules: [FaultRule]
    public let seed: UInt64
    /// The most bytes a buffering action (regex-body, rewrite-urls in bodies, gzip-body) holds before the exchange fails.
    public let bufferLimit: Int

    private struct RuleState {
        var generator: SeededGenerator
        var fired = 0
    }

    private let states: Mutex<[RuleState]>

    public init(rules: [FaultRule], seed: UInt64, bufferLimit: Int = FaultEngine.defaultBufferLimit) {
        self.rules = rules
        self.seed = seed
        self.bufferLimit = bufferLimit
        states = Mutex(rules.map { RuleState(generator: SeededGenerator(seed: seed ^ FaultEngine.fnv1a($0.name))) })
    }

    /// Starts an exchange once the request head has arrived. Request-leg rules are decided now.
    public func begin(_ context: ExchangeContext) -> ExchangeFaults {
        let firings = fire(leg: .request) {
            $0.match.holds(step: context.step, request: context.request, fields: context.request.fields, status: nil)
        }
        return ExchangeFaults(engine: self, context: context, requestFirings: firings)
    }

    /// The TLS faults for a client connection the proxy just accepted.
    public func beginConnection() -> ConnectionFaults {
        var result = ConnectionFaults(tls: [], applied: [])
        for firing in fire(leg: nil, where: { _ in true }) {
            for action in firing.rule.actions {
                switch action {
                case .requireClientCertificate(let caFile):
                    result.tls.append(.requireClientCertificate(caFile: caFile))
                    result.applied.append(AppliedFault(rule: firing.rule.name, action: action.kind, leg: nil,
                                                       change: "client certificate signed by \(caFile ?? "the proxy's CA") required"))
                case .presentUnknownCA:
                    result.tls.append(.presentUnknownCA)
                    result.applied.append(AppliedFault(rule: firing.rule.name, action: action.kind, leg: nil,
                                                       change: "server certificate from an unknown CA presented"))
                default:
                    continue // Message actions never sit in connection rules (FaultRule.problem).
                }
            }
        }
        return result
    }

    /// FNV-1a over the UTF-8 bytes: a hash that, unlike `Hasher`, is the same in every run.
    private static func fnv1a(_ name: String) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in name.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        return h
    }

    /// The rules of `leg` (nil: connection rules) that fire now, in rule order.
    /// `holds` checks the structural criteria outside the lock; probability and
    /// `times` are decided under it.
    func fire(leg: FaultLeg?, where holds: (FaultRule) -> Bool) -> [Firing] {
        let candidates = rules.indices.filter { rules[$0].match.leg == leg && holds(rules[$0]) }
        guard !candidates.isEmpty else { return [] }
        return states.withLock { states in
            var firings: [Firing] = []
            for i in candidates {
                let match = rules[i].match
                if let times = match.times, states[i].fired >= times { continue }
                if match.probability < 1, states[i].generator.nextUnit() >= match.probability { continue }
                states[i].fired += 1
                firings.append(Firing(rule: rules[i], generator: SeededGenerator(seed: states[i].generator.next())))
            }
            return firings
        }
    }
}

/// A rule that fired for one message, with a generator for its own choices.
struct Firing: Sendable {
    let rule: FaultRule
    var generator: SeededGenerator
}

/// What the proxy knows when an exchange starts.
///
/// Request-leg rules match `step`, the step the request alone tells (a token
/// POST is `token-post`). Response-leg rules match the step with the final
/// response's status known, when a `classifier` is given (a token POST
/// answered 200 is `bootstrap`, a protected request answered 401 is
/// `challenge-401`); without one they match `step` too.
public struct ExchangeContext: Sendable, Hashable {
    /// The step the proxy's classifier gave the request.
    public var step: AuthStep
    /// The request head as received from the client.
    public var request: HTTPRequestHead
    /// Reclassifies the exchange once the response head is known.
    public var classifier: StepClassifier?

    public init(step: AuthStep, request: HTTPRequestHead, classifier: StepClassifier? = nil) {
        self.step = step
        self.request = request
        self.classifier = classifier
    }

    /// Classifies the request with `classifier`, then keeps it for the response.
    public init(request: HTTPRequestHead, classifier: StepClassifier) {
        self.init(step: classifier.classify(request), request: request, classifier: classifier)
    }

    /// The step response-leg rules see for a final response head.
    func step(answeredBy response: HTTPResponseHead) -> AuthStep {
        classifier?.classify(request, response: response) ?? step
    }
}
