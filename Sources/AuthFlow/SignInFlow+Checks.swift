import Compression
import Foundation
import HTTP

extension SignInFlow {
    /// A failure found while checking a response: the mode, what was seen,
    /// and a closer document sentence than the mode's own, when there is one.
    struct FlowFailure: Error {
        let mode: FailureMode
        let evidence: String
        var sentence: DocumentSentence? = nil
        /// What to check, when the evidence says more than the mode's own advice.
        var advice: String? = nil
    }

    /// The checks made on one response, in order.
    struct CheckLog {
        private(set) var checks: [StepResult.Check] = []
        mutating func pass(_ message: String) { checks.append(.init(kind: .passed, message: message)) }
        mutating func note(_ message: String) { checks.append(.init(kind: .note, message: message)) }
        mutating func fail(_ message: String) { checks.append(.init(kind: .failed, message: message)) }
    }

    /// What the client made of a response's `Content-Encoding`.
    enum ContentCoding: Hashable {
        /// None, or `identity`: the body is the wire bytes.
        case identity
        /// A coding the app accepts (`Accept-Encoding`), removed: the body is the decoded bytes.
        case decoded(String)
        /// A coding the app accepts whose body does not decode.
        case undecodable(String, reason: String)
        /// A coding the app did not ask for: the body is the wire bytes.
        case notAccepted(String)
    }

    /// A response with the request it answers and what the jar made of its cookies.
    struct Received {
        let request: FlowRequest
        let head: HTTPResponseHead
        /// The body as it arrived.
        let wireBody: [UInt8]
        /// The body the checks read: `wireBody` with an accepted coding removed.
        let body: [UInt8]
        let coding: ContentCoding
        let cookieDecisions: [CookieJar.Decision]

        /// The most a decoded body may hold (a bootstrap is a few hundred bytes).
        static let decodedBodyLimit = 16 << 20

        init(request: FlowRequest, head: HTTPResponseHead, wireBody: [UInt8], cookieDecisions: [CookieJar.Decision]) {
            self.request = request
            self.head = head
            self.wireBody = wireBody
            self.cookieDecisions = cookieDecisions
            guard let coding = head.fields["Content-Encoding"]?.trimmingCharacters(in: .whitespaces),
                  HTTPField.lowercaseASCII(coding) != "identity" else {
                (body, self.coding) = (wireBody, .identity)
                return
            }
            guard MockServer.acceptsGzip(request.head.fields["Accept-Encoding"]),
                  CompressionFormat(contentCoding: coding) == .gzip else {
                (body, self.coding) = (wireBody, .notAccepted(coding))
                return
            }
            do {
                body = try Decompressor.decompress(wireBody, format: .gzip, outputLimit: Received.decodedBodyLimit)
                self.coding = .decoded(coding)
            } catch {
                (body, self.coding) = (wireBody, .undecodable(coding, reason: "\(error)"))
            }
        }

        var status: Int { head.status.code }
        var contentType: String? { head.fields["Content-Type"] }
        var bodyText: String { String(decoding: body, as: UTF8.self) }
        var location: String? { head.fields["Location"] }
        var isRedirect: Bool { [301, 302, 303, 307, 308].contains(status) }
        var isJSON: Bool { contentType.map { MediaType.essence(of: $0) == "application/json" } ?? false }

        /// The server's stated reason: `Intact-Reason`, else the first line of a short text body.
        var reason: String {
            if let reason = head.fields[MockServer.reasonFieldName] { return reason }
            let line = bodyText.split(separator: "\n").first.map(String.init) ?? ""
            return line.count <= 200 ? line : String(line.prefix(200)) + "…"
        }

        /// `302 to https://… ` / `503 text/html, 1234 bytes`, for evidence lines.
        var brief: String {
            var text = "\(status)"
            if let location { text += " to \(location)" }
            text += ", \(contentType ?? "no Content-Type"), \(wireBody.count) bytes"
            return text
        }

        var summary: StepResult.ResponseSummary {
            StepResult.ResponseSummary(status: status, contentType: contentType, location: location,
                                       setCookieNames: head.fields.values("Set-Cookie").compactMap { SetCookie(parsing: $0)?.name },
                                       bodyBytes: wireBody.count)
        }
    }

    /// Checks every response gets before the step's own: not an
    /// intermediary's own answer that says why (`Proxy-Status`, a gateway's
    /// client-certificate page), (against the mock server) produced by the
    /// server, and not re-encoded on the way.
    func screen(_ r: Received, log: inout CheckLog) throws(FlowFailure) {
        if let failure = intermediaryAnswer(r) { throw failure }
        let knowsServer = configuration.expectsTraceEcho || serverEvidence.echoes
        if knowsServer, let trace = r.request.traceID {
            guard ServerEvidence.echoed(r) else {
                if let copy = cachedCopy(r) { throw copy }
                if let page = errorPageFor401(r) { throw page }
                throw foreign(r, why: "without the echo of \(SignInFlow.traceFieldName): \(trace)")
            }
            log.pass("response came from the server (trace echoed)")
        }
        try checkCoding(r, knowsServer: knowsServer, log: &log)
        if let alternative = r.head.fields["Alt-Svc"], AltSvc.advertisesHTTP3(alternative) {
            let who = knowsServer ? "the intermediary advertises HTTP/3 (the mock server never does)" : "the answer advertises HTTP/3"
            log.note("WARNING: Alt-Svc: \(alternative): \(who): clients may leave this path (QUIC over UDP, past every TCP tap "
                     + "and TCP intermediary policy)")
        }
    }

    /// A coding the app did not ask for was added on the way; a coding the
    /// server says it applied (`Intact-Content-Encoding`) that did not
    /// arrive was removed on the way; one the app asked
    /// for is the server's when the server says so (`Intact-Content-Encoding`,
    /// the mock server's statement), added on the way when a server known to
    /// be the mock server does not say so, and cannot be told otherwise.
    private func checkCoding(_ r: Received, knowsServer: Bool, log: inout CheckLog) throws(FlowFailure) {
        let field = MockServer.contentEncodingFieldName
        switch r.coding {
        case .identity:
            // The other way round: the server says it encoded the body, and it arrived unencoded.
            guard let stated = r.head.fields[field]?.trimmingCharacters(in: .whitespaces),
                  !stated.isEmpty, HTTPField.lowercaseASCII(stated) != "identity" else { return }
            throw FlowFailure(mode: .compress,
                              evidence: "the server sent its body \(stated)-encoded (\(field): \(stated)) but it arrived "
                                  + "unencoded (no Content-Encoding): it was decoded on the way (an intermediary that asked "
                                  + "the server for \(stated) on the app's behalf?)")
        case .notAccepted(let coding):
            let asked = r.request.head.fields["Accept-Encoding"].map { "accepts only \($0)" } ?? "asked for no encoding"
            throw FlowFailure(mode: .compress, evidence: "response has Content-Encoding: \(coding) although the app \(asked)")
        case .undecodable(let coding, let reason):
            throw FlowFailure(mode: .compress, evidence: "response has Content-Encoding: \(coding) but its body does not decode: \(reason)")
        case .decoded(let coding):
            guard knowsServer else {
                log.note("body \(coding)-encoded, as the app accepts, and decoded; who encoded it cannot be told (the server does not say)")
                return
            }
            guard r.head.fields[field].map(HTTPField.lowercaseASCII) == HTTPField.lowercaseASCII(coding) else {
                throw FlowFailure(mode: .compress,
                                  evidence: "response has Content-Encoding: \(coding), which the app accepts, but the server sent "
                                      + "its body unencoded (no \(field): \(coding)): it was compressed on the way")
            }
            log.pass("body \(coding)-encoded by the server itself (\(field)), decoded")
        }
    }

    /// Step 1 answered 401 without the step-3 JSON and without the echo: an
    /// intermediary's own error page where the server's 401 JSON belongs
    /// (Apache `ProxyErrorOverride`, nginx `error_page 401`), whether it
    /// replaced the server's answer or answered in its place; diagnosed as
    /// `html-401` with or without the echo expected, as `verify` sees the
    /// same 401 with its body changed.
    func errorPageFor401(_ r: Received) -> FlowFailure? {
        guard r.request.step == .protectedRequest, r.status == 401, !(r.isJSON && JSONBody.decodeObject(r.body) != nil),
              let trace = r.request.traceID else { return nil }
        let who = serverEvidence.answerer(of: r).map { "; it came from \($0)" } ?? ""
        return FlowFailure(mode: .html401,
                           evidence: "401 with \(r.contentType ?? "no Content-Type") and a body that is not a JSON object "
                               + "(\(r.body.count) bytes), without the echo of \(SignInFlow.traceFieldName): \(trace): an "
                               + "intermediary's own error page in place of the server's 401 JSON\(who)")
    }

    /// An answer the server did not send, naming what sent it when the answer says.
    func foreign(_ r: Received, why: String) -> FlowFailure {
        let who = serverEvidence.answerer(of: r).map { "; it came from \($0)" } ?? ""
        return FlowFailure(mode: .foreignResponse, evidence: "\(r.brief) \(why); the server did not send it\(who)")
    }

    /// An answer to step 1 other than 401: the server's 401 with its status
    /// rewritten (the echo and the step-3 JSON show the server sent it), the
    /// server's other answer (echoed), or something else answering.
    func notAChallenge(_ r: Received) -> FlowFailure {
        let echoed = ServerEvidence.echoed(r)
        if echoed, let object = JSONBody.decodeObject(r.body), object["contextUrl"] is String, object["tokenUrl"] is String {
            return FlowFailure(mode: .modifiedResponse,
                               evidence: "the server's 401 challenge (its JSON with contextUrl and tokenUrl, \(SignInFlow.traceFieldName) "
                                   + "echoed) arrived as \(r.status): its status was rewritten on the way", sentence: .step4Keys)
        }
        if echoed || configuration.expectsTraceEcho {
            return FlowFailure(mode: .unexpectedResponse,
                               evidence: "\(r.brief) where an Appian server answers an unauthenticated request with 401",
                               sentence: .step3Challenge)
        }
        // No evidence either way (a server that does not echo): nothing but the server's 401 is the server's.
        let who = serverEvidence.answerer(of: r).map { "; it came from \($0)" } ?? ""
        return FlowFailure(mode: .foreignResponse,
                           evidence: "\(r.brief) where an Appian server answers an unauthenticated request with 401\(who)",
                           sentence: .step3Challenge)
    }

    /// A redirect where the server never redirects: something in front of it demands its own sign-in.
    func gatewayRedirect(_ r: Received) -> FlowFailure {
        if let same = sameResourceRedirect(r) { return same }
        return FlowFailure(mode: .gatewayCookie, evidence: "\(r.request.head.method) \(r.request.url.path) answered \(r.brief): something in front of the server demands its own sign-in")
    }

    /// Steps 10–11: the three session cookies arrived as separate fields with their attributes, and will be sent back.
    mutating func auditSessionCookies(_ r: Received, contextPath: String, log: inout CheckLog, now: Date) throws(FlowFailure) {
        let expected = [StepClassifier.sessionCookie, MockServer.csrfCookie, MockServer.multipartCsrfCookie]
        let fields = r.head.fields.values("Set-Cookie")
        guard !fields.isEmpty else {
            throw FlowFailure(mode: .stripSetCookie, evidence: "the bootstrap response has no Set-Cookie field (expected \(expected.joined(separator: ", ")))")
        }
        for field in fields {
            let named = expected.filter { field.contains("\($0)=") }
            if named.count > 1 {
                throw FlowFailure(mode: .rewriteSetCookie, evidence: "one Set-Cookie field carries \(named.joined(separator: " and ")): fields were folded")
            }
        }
        let parsed = fields.compactMap(SetCookie.init(parsing:))
        let missing = expected.filter { name in !parsed.contains { $0.name == name } }
        guard missing.isEmpty else {
            throw FlowFailure(mode: .stripSetCookie, evidence: "the bootstrap response lacks Set-Cookie for \(missing.joined(separator: ", ")) (got: \(parsed.map(\.name).joined(separator: ", ")))")
        }
        let host = r.request.url.origin.host
        var changedOnTheWay: [CookieChange] = []
        for line in fields {
            let received = CookieParts.setCookie(line)
            guard expected.contains(received.name), let cookie = SetCookie(parsing: line) else { continue }
            // What the server sets (AUTH_FLOW.md step 11), compared part by part with what arrived.
            var attributes = ["Path=\(contextPath)", "Secure"]
            if cookie.name == StepClassifier.sessionCookie { attributes.append("HttpOnly") }
            let sent = CookieParts(name: received.name, value: received.value, attributes: attributes)
            let changes = CookieChange.compare([sent], [received]).filter { change in
                // Max-Age, Expires and a Domain equal to the host change nothing the app relies on.
                guard case .attributeAdded(_, let attribute) = change else { return true }
                let name = HTTPField.lowercaseASCII(String(attribute.prefix { $0 != "=" }))
                return !["max-age", "expires"].contains(name) && !(name == "domain" && cookie.domain == host)
            }
            let problems = changes.filter { change in
                switch change {
                case .attributeRemoved, .attributeChanged, .opaqueChanged: return true
                case .attributeAdded(_, let attribute): return HTTPField.lowercaseASCII(attribute).hasPrefix("domain")
                default: return false
                }
            }
            guard problems.isEmpty else {
                throw FlowFailure(mode: .rewriteSetCookie, evidence: problems.map(\.description).joined(separator: "; "))
            }
            changedOnTheWay += changes
        }
        for change in changedOnTheWay { log.note("\(change) (not an attribute the server sets)") }
        for case .rejected(let name, let reason) in r.cookieDecisions {
            throw FlowFailure(mode: .rewriteSetCookie, evidence: "the app refused cookie \(name): \(reason)")
        }
        for cookie in parsed where !expected.contains(cookie.name) {
            log.note("extra cookie \(cookie.name), not one the Appian server sets (an affinity cookie added on the way?)")
        }
        guard appJar.value(of: StepClassifier.sessionCookie, for: configuration.resourceURL, now: now) != nil else {
            throw FlowFailure(mode: .rewriteSetCookie, evidence: "\(StepClassifier.sessionCookie) would not be sent to \(configuration.resourceURL)")
        }
        log.pass("three separate Set-Cookie fields: \(expected.joined(separator: ", ")), "
                 + (changedOnTheWay.isEmpty ? "attributes intact" : "required attributes present"))
    }
}
