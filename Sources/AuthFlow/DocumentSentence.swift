/// The sentences of the source document (Appian Mobile authentication and
/// its network requirements) that diagnoses quote. This is the one table of
/// quotations: each `text` is copied verbatim from the document, and a test
/// checks that against the document itself.
public enum DocumentSentence: String, Hashable, Sendable, Codable, CaseIterable {
    case step3Challenge = "step-3"
    case step4Keys = "step-4"
    case step5LoginURL = "step-5"
    case step6SignIn = "step-6"
    case step7Callback = "step-7"
    case step9TokenURL = "step-9"
    case step9TokenBody = "step-9-body"
    case step10Session = "step-10"
    case step11Bootstrap = "step-11"
    case directCommunication = "direct-communication"
    case noAuthenticationCookies = "no-authentication-cookies"
    case unmodified = "unmodified"
    case onlyAppianResponses = "only-appian-responses"
    case certificateGateway = "certificate-gateway"
    case clientCertificateImport = "client-certificate-import"
    case vpn = "vpn"
    case perAppVPN = "per-app-vpn"
    case step5Browser = "step-5-browser"

    /// The sentence, verbatim.
    public var text: String {
        switch self {
        case .step3Challenge:
            return "The server replies with a 401 status code and a JSON payload containing a context URL and token URL."
        case .step4Keys:
            return "The response has a 401 status code with contextUrl and tokenUrl keys and came from an Appian server."
        case .step5LoginURL:
            return "The app constructs a \"login\" URL that contains a number of important query parameters needed to set state on the server."
        case .step6SignIn:
            return "The user signs in using the web browser."
        case .step7Callback:
            return "When the user successfully authenticates with the Appian server, the server redirects the web browser to a \"callback\" URL that uses the scheme provided by the login URL and contains a \"token\" value."
        case .step9TokenURL:
            return "The app makes a POST request to the \"token\" URL received in step 3."
        case .step9TokenBody:
            return "The body of the request contains the token returned by the web browser."
        case .step10Session:
            return "The server uses the token to establish an authenticated session."
        case .step11Bootstrap:
            return "The server returns a \"bootstrap\" response with information about the user and session cookies that allow the app to make subsequent requests without reauthenticating."
        case .directCommunication:
            return "In order for the authentication flow described above to complete successfully, the mobile app must be able to communicate directly with the Appian server."
        case .noAuthenticationCookies:
            return "Appian does not support any configuration in which Appian Mobile needs authentication cookies to reach the Appian server."
        case .unmodified:
            return "If communication between the mobile app and server is routed through an intermediary, such as a load balancer or proxy, both the request and response must remain unmodified."
        case .onlyAppianResponses:
            return "Appian does not support any configuration in which Appian Mobile receives HTTP responses from a server other than an Appian server."
        case .certificateGateway:
            return "The Appian server can be secured behind a network gateway that issues certificate challenges."
        case .clientCertificateImport:
            return "Appian Mobile allows users to import a client certificate to be used whenever a certificate challenge is received."
        case .vpn:
            return "Appian Mobile can connect to a VPN-protected server as long as the mobile device is connected to the VPN."
        case .perAppVPN:
            return "Mobile devices can connect to a VPN at the operating system level or with a per-app VPN configured through MDM."
        case .step5Browser:
            return "It then prompts the user to sign in by opening the login URL in the user's web browser."
        }
    }
}
