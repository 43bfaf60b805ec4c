/// Sentences of the source document (Appian Mobile authentication and its
/// network requirements) that the presets break, quoted verbatim.
public enum DocumentSentence {
    public static let step3 = "The server replies with a 401 status code and a JSON payload containing a context URL and token URL."
    public static let step4 = "The response has a 401 status code with contextUrl and tokenUrl keys and came from an Appian server."
    public static let step5 = "The app constructs a \"login\" URL that contains a number of important query parameters needed to set state on the server."
    public static let step7 = "When the user successfully authenticates with the Appian server, the server redirects the web browser to a \"callback\" URL that uses the scheme provided by the login URL and contains a \"token\" value."
    public static let step9 = "The app makes a POST request to the \"token\" URL received in step 3."
    public static let step10 = "The server uses the token to establish an authenticated session."
    public static let step11 = "The server returns a \"bootstrap\" response with information about the user and session cookies that allow the app to make subsequent requests without reauthenticating."
    public static let directCommunication = "In order for the authentication flow described above to complete successfully, the mobile app must be able to communicate directly with the Appian server."
    public static let noAuthenticationCookies = "Appian does not support any configuration in which Appian Mobile needs authentication cookies to reach the Appian server."
    public static let unmodified = "If communication between the mobile app and server is routed through an intermediary, such as a load balancer or proxy, both the request and response must remain unmodified."
    public static let noForeignResponses = "Appian does not support any configuration in which Appian Mobile receives HTTP responses from a server other than an Appian server."
    public static let certificateChallenges = "The Appian server can be secured behind a network gateway that issues certificate challenges."
    public static let clientCertificates = "Appian Mobile allows users to import a client certificate to be used whenever a certificate challenge is received."

    /// Every quoted sentence, for checks against the document.
    public static let all = [step3, step4, step5, step7, step9, step10, step11, directCommunication,
                             noAuthenticationCookies, unmodified, noForeignResponses, certificateChallenges, clientCertificates]
}
