import AuthFlow
import Evidence
import HTTP
import Proxy

/// Labels each exchange of the mobile sign-in flow with its `AuthStep`
/// (`AUTH_FLOW.md`), from the request as received and the response as the
/// server sent it. Exchanges outside the flow (step `other`) stay unlabelled.
/// It only observes: every part passes on unchanged. `intact proxy` and the
/// demo put it first among the add-ons (`ProxyConfiguration.signInAddons`),
/// so it sees the request as received and the response as the server sent
/// it, before any fault.
public struct AuthStepAddon: ProxyAddon {
    public let classifier: StepClassifier
    /// The context path as given, named in the recording header.
    public let contextPath: String

    /// `contextPath`: the server's context path, `suite` by default.
    public init(contextPath: String = "suite") {
        self.contextPath = contextPath
        classifier = StepClassifier(contextPath: contextPath)
    }

    public var recordedOptions: [String: String] { ["contextPath": contextPath] }

    public func hook(for exchange: ExchangeHookContext) -> (any ExchangeHook)? {
        AuthStepHook(classifier: classifier, request: exchange.request)
    }
}

/// `AuthStepAddon`'s hook for one exchange: remembers the final response head.
final class AuthStepHook: ExchangeHook {
    private let classifier: StepClassifier
    private let request: HTTPRequestHead
    private var responseHead: HTTPResponseHead?

    init(classifier: StepClassifier, request: HTTPRequestHead) {
        self.classifier = classifier
        self.request = request
    }

    /// It only watches: the flow calls `watchResponse` and builds no output list per part.
    public var onlyWatches: Bool { true }

    public func watchResponse(_ part: HTTPResponsePart) {
        if case .head(let head) = part, !head.isInformational { responseHead = head }
    }

    public func finish(_ record: inout ExchangeRecord) {
        let step = classifier.classify(request, response: responseHead)
        if step != .other { record.authFlowStep = step.rawValue }
    }
}

extension ProxyConfiguration {
    /// The add-ons of the sign-in flow in their order: the step labeller
    /// first, then `others` (the fault engine). What `intact proxy` and the
    /// demo run; a bare `ProxyServer` runs only the add-ons it is given.
    public static func signInAddons(contextPath: String, _ others: [any ProxyAddon] = []) -> [any ProxyAddon] {
        [AuthStepAddon(contextPath: contextPath)] + others
    }
}
