import Foundation
import HTTP

/// Steps 9–11 on the server: the token exchange and the bootstrap response.
///
/// A known token is spent by its first presentation, whatever the outcome
/// (single use means a second attempt fails even after a wrong verifier).
/// Order of checks: body readable (400), token known, unused, unexpired,
/// verifier's S256 equals the bound challenge (each 401 with the step-3 JSON).
///
/// Bootstrap (*synthetic* schema): a JSON object with `username`,
/// `displayName`, `email`, `locale`, `timeZone`, `serverVersion`, and
/// `clientCertificateSubject` when one was presented; three separate
/// `Set-Cookie` fields: `JSESSIONID` (Path=/{ctx}; Secure; HttpOnly),
/// `__appianCsrfToken` and `__appianMultipartCsrfToken` (Path=/{ctx}; Secure).
extension MockServer {
    public static let csrfCookie = "__appianCsrfToken"
    public static let multipartCsrfCookie = "__appianMultipartCsrfToken"

    /// Why a readable token POST was refused (401 with the step-3 JSON); the
    /// raw value is the `Intact-Reason` field, which the client reads back.
    public enum TokenRejection: String, Hashable, Sendable, CaseIterable {
        case unknownToken = "unknown token"
        case alreadyUsed = "token already used"
        case expired = "token expired"
        case verifierMismatch = "code verifier does not match the code challenge"
        case unknownUser = "the token's user no longer exists"
    }

    mutating func tokenExchange(_ request: MockRequest, now: Date) -> Reply {
        let presented: (token: String, verifier: String)
        do {
            presented = try configuration.tokenPost.decode(contentType: request.head.fields["Content-Type"], body: request.body)
        } catch {
            return .plain(400, error.description)
        }
        guard var token = tokens[presented.token] else { return challenge(reason: TokenRejection.unknownToken.rawValue) }
        guard !token.used else { return challenge(reason: TokenRejection.alreadyUsed.rawValue) }
        token.used = true
        tokens[presented.token] = token
        guard token.expires > now else { return challenge(reason: TokenRejection.expired.rawValue) }
        guard PKCE.verify(verifier: presented.verifier, against: token.codeChallenge) else {
            return challenge(reason: TokenRejection.verifierMismatch.rawValue)
        }
        guard let user = configuration.users.first(where: { $0.username == token.username }) else {
            return challenge(reason: TokenRejection.unknownUser.rawValue)
        }

        let sessionID = MockServer.randomToken()
        let session = Session(username: user.username, csrfToken: MockServer.randomToken(),
                              multipartCsrfToken: MockServer.randomToken(),
                              clientCertificateSubject: request.clientCertificateSubject, lastUsed: now)
        sessions[sessionID] = session
        var bootstrap: [String: Any] = [
            "username": user.username, "displayName": user.displayName, "email": user.email,
            "locale": user.locale, "timeZone": user.timeZone, "serverVersion": configuration.serverVersion,
        ]
        if let subject = request.clientCertificateSubject { bootstrap["clientCertificateSubject"] = subject }
        var reply = Reply.json(200, bootstrap, note: "token accepted; session created for \(user.username)")
        var sessionCookie = contextCookie(StepClassifier.sessionCookie, sessionID, httpOnly: true)
        sessionCookie.secure = true
        reply.setCookie(sessionCookie)
        reply.setCookie(contextCookie(MockServer.csrfCookie, session.csrfToken, httpOnly: false))
        reply.setCookie(contextCookie(MockServer.multipartCsrfCookie, session.multipartCsrfToken, httpOnly: false))
        return reply
    }
}
