import Foundation

/// One exchange of a run as the client saw it, with its checks and verdict.
public struct StepResult: Hashable, Sendable, Codable {
    /// What was sent, briefly.
    public struct RequestSummary: Hashable, Sendable, Codable {
        public var method: String
        public var url: String
        /// Names of the cookies sent (values are secrets).
        public var cookieNames: [String]
        public var bodyBytes: Int
    }

    /// What came back, briefly.
    public struct ResponseSummary: Hashable, Sendable, Codable {
        public var status: Int
        public var contentType: String?
        public var location: String?
        /// Names of the cookies set, in field order.
        public var setCookieNames: [String]
        public var bodyBytes: Int
    }

    /// One check the client made.
    public struct Check: Hashable, Sendable, Codable {
        public enum Kind: String, Hashable, Sendable, Codable {
            case passed, failed, note
        }
        public var kind: Kind
        public var message: String
    }

    public enum Verdict: String, Hashable, Sendable, Codable {
        case pass, fail
    }

    public var step: FlowStep
    /// The classifier's label of this exchange (stable string in recordings).
    public var label: AuthStep
    public var agent: FlowAgent
    public var traceID: String?
    public var request: RequestSummary
    /// Nil when the exchange failed without a response.
    public var response: ResponseSummary?
    public var transportFailure: TransportFailure?
    /// Seconds from sending the request to the end of the response, as the driver measured.
    public var elapsed: TimeInterval
    public var verdict: Verdict
    public var checks: [Check]
}

/// The result of a run.
public struct FlowOutcome: Hashable, Sendable, Codable {
    /// True only when the sign-in completed and the follow-up request succeeded (exit status 0).
    public var succeeded: Bool
    /// True when the bootstrap response arrived with its cookies.
    public var signInCompleted: Bool
    /// The user name from the bootstrap, when it arrived.
    public var username: String?
    public var steps: [StepResult]
    /// Nil on success.
    public var diagnosis: Diagnosis?
}
