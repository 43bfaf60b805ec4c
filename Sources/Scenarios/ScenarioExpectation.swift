import AuthFlow
import Evidence

/// What a scenario must produce: how the client ends, and what the verifier
/// says about the exchanges that crossed the load balancer.
public struct ScenarioExpectation: Hashable, Sendable {
    /// How `intact client` must end.
    public enum ClientOutcome: Hashable, Sendable {
        /// Exit status 0: signed in, and the follow-up request succeeded.
        case succeeds
        /// A non-zero exit status with this diagnosis, found at this exchange.
        /// `step` is the client's own step (`FlowStep`: `protected-request`,
        /// `token-exchange`…), as `intact client` names it.
        case fails(diagnosis: FailureMode, step: FlowStep)
    }

    /// What `intact verify` must conclude.
    public enum VerifyOutcome: Hashable, Sendable {
        /// The policy holds; each field named here must show as a tolerated
        /// difference on the load balancer's hop (proof it was seen, not
        /// hidden), and the report must list at least `intermediaryRequests`
        /// requests the load balancer made itself (its health checks; a
        /// minimum, because they run on a timer).
        case holds(tolerated: [String], intermediaryRequests: Int = 0)
        /// The policy fails, on the load balancer's hop only; `failure` is one
        /// of the failing exchanges.
        case fails(ExpectedFailure)
    }

    /// One exchange that must fail on the load balancer's hop, and how.
    public struct ExpectedFailure: Hashable, Sendable {
        /// The exchange's label as the taps record it and the report groups
        /// by it (`AuthStep`: `challenge-401`, `bootstrap`…; the label of the
        /// tap nearest the client). Not the client's `FlowStep`: one client
        /// step gets different labels by its answer (`token-post` when the
        /// token POST is not answered 200, `bootstrap` when it is).
        public var step: AuthStep
        /// The hop's verdict there.
        public var verdict: HopVerdict
        /// Named differences that must all be among those of that hop, when the verdict is `modified`.
        public var differences: [ExpectedDifference]
        /// The answer on that hop must be named a copy of another exchange's (`cachedCopy`: a cache served it).
        public var cachedCopy: Bool
        /// Text one recorded failure attached to that hop must contain, in its
        /// message or its explanation (tap B's "peer presented no client certificate").
        public var failure: String?

        public init(step: AuthStep, verdict: HopVerdict, difference: ExpectedDifference? = nil,
                    differences: [ExpectedDifference] = [], cachedCopy: Bool = false, failure: String? = nil) {
            self.step = step
            self.verdict = verdict
            self.differences = (difference.map { [$0] } ?? []) + differences
            self.cachedCopy = cachedCopy
            self.failure = failure
        }
    }

    /// A difference by kind, message, (for field and cookie kinds) field
    /// name, and optionally the cookie it is about and its exact text.
    public struct ExpectedDifference: Hashable, Sendable, CustomStringConvertible {
        public enum Message: String, Hashable, Sendable, CaseIterable {
            case request, response
        }

        public var message: Message
        public var kind: MessageDifference.Kind
        /// Lowercased; nil for kinds without a field (`body-changed`, `status-changed`…).
        public var field: String?
        /// The cookie's name, for a difference of one cookie; nil: any.
        public var cookie: String?
        /// The difference's exact text (`JSESSIONID: Path changed (/suite → /)`); nil: any.
        public var text: String?

        public init(message: Message, kind: MessageDifference.Kind, field: String? = nil, cookie: String? = nil,
                    text: String? = nil) {
            self.message = message
            self.kind = kind
            self.field = field
            self.cookie = cookie
            self.text = text
        }

        /// Whether `difference` is this one.
        public func matches(_ difference: MessageDifference) -> Bool {
            difference.kind == kind && difference.field == field && (cookie == nil || difference.cookie == cookie)
                && (text == nil || difference.text == text)
        }

        /// `response field-removed set-cookie`, `response cookie-changed set-cookie JSESSIONID "…"`.
        public var description: String {
            "\(message.rawValue) \(kind.rawValue)" + (field.map { " \($0)" } ?? "") + (cookie.map { " \($0)" } ?? "")
                + (text.map { " \"\($0)\"" } ?? "")
        }
    }

    /// How TLS must cross a forward intermediary (`expect.tls`).
    public enum TLSOutcome: String, Hashable, Sendable, CaseIterable {
        /// Tap A's sessions reach tap B unopened.
        case tunnel
        /// The intermediary terminates them with certificates it mints, and opens its own.
        case reoriginated
    }

    public var client: ClientOutcome
    public var verify: VerifyOutcome
    /// Nil: not checked (a reverse intermediary).
    public var tls: TLSOutcome?

    public init(client: ClientOutcome, verify: VerifyOutcome, tls: TLSOutcome? = nil) {
        self.client = client
        self.verify = verify
        self.tls = tls
    }

    /// `expect.tls` against what the run showed.
    static func tlsMismatches(expected: TLSOutcome, observed: IntermediaryTLS?) -> [String] {
        switch (expected, observed) {
        case (.tunnel, .tunnel?), (.reoriginated, .reoriginated?): return []
        case (_, nil): return ["tls: expected \(expected.rawValue), but tap A recorded no upstream TLS session"]
        case (_, let observed?): return ["tls: expected \(expected.rawValue), got \(observed)"]
        }
    }

    /// True when the scenario shows a configuration that keeps the document's rules.
    public var isGood: Bool {
        if case .succeeds = client, case .holds = verify { return true }
        return false
    }
}
