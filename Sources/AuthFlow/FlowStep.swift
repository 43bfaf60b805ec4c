/// The exchanges of one sign-in run, in order, each covering steps of the
/// document's numbered list. Raw values are stable strings.
public enum FlowStep: String, Hashable, Sendable, Codable, CaseIterable {
    /// Step 1 request; steps 2–4 checks on its answer; step 5 builds the login URL.
    case protectedRequest = "protected-request"
    /// Step 6: the browser opens the login URL.
    case loginPage = "login-page"
    /// Step 6b: the browser posts credentials; step 7 checks the callback; step 8 closes the browser.
    case credentials = "credentials"
    /// Step 9: the app posts the token; steps 10–11 check the bootstrap.
    case tokenExchange = "token-exchange"
    /// After: step 1 again with the session cookies.
    case followUp = "follow-up"

    /// The document steps this exchange covers.
    public var documentSteps: String {
        switch self {
        case .protectedRequest: return "1-5"
        case .loginPage: return "6"
        case .credentials: return "6b-8"
        case .tokenExchange: return "9-11"
        case .followUp: return "after"
        }
    }
}

/// Which user agent sends a request, and so which cookie jar it uses.
public enum FlowAgent: String, Hashable, Sendable, Codable {
    case app
    case browser
}
