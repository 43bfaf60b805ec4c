import AuthFlow
import Evidence
import HTTP

/// Labels each exchange of the mobile sign-in flow with its `AuthStep`
/// (`AUTH_FLOW.md`), from the request as received and the response as the
/// server sent it. Exchanges outside the flow (step `other`) stay unlabelled.
/// It only observes: every part passes on unchanged.
public struct AuthStepAddon: ProxyAddon {
    public let classifier: StepClassifier

    /// `contextPath`: the server's context path, `suite` by default.
    public init(contextPath: String = "suite") {
        classifier = StepClassifier(contextPath: contextPath)
    }

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

    func response(_ part: HTTPResponsePart) -> [HookOutput<HTTPResponsePart>] {
        if case .head(let head) = part, !head.isInformational { responseHead = head }
        return [.forward(part)]
    }

    func finish(_ record: inout ExchangeRecord) {
        let step = classifier.classify(request, response: responseHead)
        if step != .other { record.authFlowStep = step.rawValue }
    }
}
