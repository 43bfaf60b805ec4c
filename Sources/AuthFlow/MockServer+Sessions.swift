import Foundation
import HTTP

/// Sessions and the protected resources under `{ctx}/rest`.
extension MockServer {
    /// The header an unsafe request must carry, equal to the session's `__appianCsrfToken`.
    public static let csrfHeader = "X-APPIAN-CSRF-TOKEN"

    /// What a request's `JSESSIONID` cookie leads to.
    enum SessionLookup {
        case live(id: String, Session)
        case missing
        case unknown
        case expired(id: String)

        var reason: String {
            switch self {
            case .live: return "live session"
            case .missing: return "no session cookie"
            case .unknown: return "unknown session"
            case .expired: return "session expired after the idle timeout"
            }
        }
    }

    /// Finds the session of a request at `now`; the first `JSESSIONID` that names a session wins.
    func lookUpSession(_ fields: HTTPFields, now: Date) -> SessionLookup {
        let ids = CookieJar.parseCookieHeader(fields).filter { $0.name == StepClassifier.sessionCookie }.map(\.value)
        guard !ids.isEmpty else { return .missing }
        guard let id = ids.first(where: { sessions[$0] != nil }), let session = sessions[id] else { return .unknown }
        if now.timeIntervalSince(session.lastUsed) > configuration.sessionIdleTimeout { return .expired(id: id) }
        return .live(id: id, session)
    }

    /// Methods that change state and so need the CSRF header.
    static func isUnsafe(_ method: HTTPMethod) -> Bool {
        [.post, .put, .patch, .delete].contains(method)
    }

    mutating func protectedResource(_ request: MockRequest, now: Date) -> Reply {
        let lookup = lookUpSession(request.head.fields, now: now)
        guard case .live(let id, var session) = lookup else {
            if case .expired(let id) = lookup { sessions[id] = nil }
            return challenge(reason: lookup.reason)
        }
        if MockServer.isUnsafe(request.head.method) {
            guard let header = request.head.fields[MockServer.csrfHeader] else {
                return .plain(403, "\(request.head.method) without \(MockServer.csrfHeader)")
            }
            guard header == session.csrfToken else {
                return .plain(403, "\(MockServer.csrfHeader) does not match the session")
            }
        }
        session.lastUsed = now
        sessions[id] = session
        return .json(200, ["user": session.username, "method": request.head.method.rawValue, "path": request.head.pathOnly],
                     note: "served \(request.head.pathOnly) to \(session.username)")
    }
}
