import ConfigurationFile
import Foundation

/// Steps 6–8 in a real browser, as a sans-io state machine over the
/// DevTools protocol: DevTools messages in, commands out; no process, no
/// clock (the driver, `ChromiumBrowser`, owns both and reports the pipe
/// closing or the time running out). Tested with scripted messages.
///
/// What it does, as a person would: opens a tab, enables the Network, Page,
/// Runtime and Audits domains (and Fetch, to add the trace field to each
/// page request), opens the login URL, waits for the page to load, reads
/// the page's body, fills the form it shows (the password field, and the
/// user-name field found by type and name), submits it, and catches the
/// navigation to the custom scheme from `Network.requestWillBeSent` (the
/// browser cannot open it). Along the way it keeps every exchange and what
/// the browser refused (`BrowserRun`).
///
/// Phases: `creatingTarget → attaching → enabling → loadingLoginPage →
/// readingLoginBody → filling → awaitingCallback (→ readingResultBody) →
/// finished`. Every answer is matched by command id; anything out of phase
/// is kept as evidence and otherwise ignored. Once `finished`, `run` is
/// final and no more commands come out.
public struct BrowserSignIn: Sendable {
    /// What the browser is asked to do.
    public struct Task: Hashable, Sendable {
        public var loginURL: String
        /// The scheme of the callback (`com.appian.tempo`).
        public var callbackScheme: String
        public var username: String
        public var password: String
        /// The trace field's name and the ids for the page requests, in order
        /// (login page, credentials POST); empty turns tracing off.
        public var traceFieldName: String
        public var traceIDs: [String]

        public init(loginURL: String, callbackScheme: String, username: String, password: String,
                    traceFieldName: String = "Intact-Trace", traceIDs: [String] = []) {
            self.loginURL = loginURL
            self.callbackScheme = callbackScheme
            self.username = username
            self.password = password
            self.traceFieldName = traceFieldName
            self.traceIDs = traceIDs
        }
    }

    enum Phase: Hashable, Sendable {
        case idle
        case creatingTarget(command: Int)
        case attaching(command: Int)
        case enabling(waiting: Set<Int>)
        case loadingLoginPage(navigate: Int)
        case readingLoginBody(command: Int)
        case filling(command: Int)
        case awaitingCallback
        case readingResultBody(command: Int)
        /// The page's navigation failed; a round trip through the page lets
        /// the reports that follow a block (Audits CSP issues) arrive first.
        case settling(command: Int, failure: BrowserFailure)
        case finished
    }

    public let task: Task
    private(set) var phase = Phase.idle
    public private(set) var run = BrowserRun()
    private var nextID = 0
    private var targetID: String?
    private var session: String?
    /// Index in `run.exchanges` of each request id's newest hop.
    private var current: [String: Int] = [:]
    /// Extra-info events that came before their request.
    private var earlyRequestFields: [String: [(String, String)]] = [:]
    /// The id of `Fetch.enable`, the one command whose refusal the run survives.
    private var fetchEnable: Int?
    private var loadEventSeen = false
    private var mainDocumentDone = false

    public init(task: Task) {
        self.task = task
        run.trace = task.traceIDs.isEmpty ? .off : .fetchInterception
    }

    /// True once the run is over (callback caught or failed).
    public var isFinished: Bool { phase == .finished }

    /// The first command: open a tab.
    public mutating func start() -> [CDPCommand] {
        guard phase == .idle else { return [] }
        let create = command("Target.createTarget", .object(["url": .string("about:blank")]), session: false)
        phase = .creatingTarget(command: create.id)
        note("started")
        return [create]
    }

    /// The pipe closed: the browser ended.
    public mutating func browserEnded(termination: String?) {
        guard !isFinished else { return }
        finish(.browserEnded(termination: termination ?? "closed its DevTools pipe", lastActivity: run.lastActivity))
    }

    /// The driver's deadline passed.
    public mutating func timedOut(seconds: Double) {
        guard !isFinished else { return }
        finish(.timedOut(seconds: seconds, lastActivity: run.lastActivity))
    }

    /// The pipe carried something that is not DevTools.
    public mutating func protocolFailed(_ reason: String) {
        guard !isFinished else { return }
        finish(.protocolError(reason))
    }

    /// Takes one message; returns the commands to send now.
    public mutating func receive(_ message: CDPMessage) -> [CDPCommand] {
        guard !isFinished else { return [] }
        switch message {
        case .response(let id, _, let result):
            return answered(id, result)
        case .event(let method, let sessionID, let params):
            guard sessionID == nil || sessionID == session else { return [] }
            return event(method, params)
        }
    }

    // MARK: Answers

    private mutating func answered(_ id: Int, _ result: Result<LocatedJSON, CDPCommandError>) -> [CDPCommand] {
        switch phase {
        case .creatingTarget(let expected) where expected == id:
            guard case .success(let value) = result, let target = value["targetId"]?.string else {
                return refused("Target.createTarget", result)
            }
            targetID = target
            let attach = command("Target.attachToTarget", .object(["targetId": .string(target), "flatten": .bool(true)]),
                                 session: false)
            phase = .attaching(command: attach.id)
            return [attach]
        case .attaching(let expected) where expected == id:
            guard case .success(let value) = result, let sessionID = value["sessionId"]?.string else {
                return refused("Target.attachToTarget", result)
            }
            session = sessionID
            var commands = [command("Network.enable"), command("Page.enable"), command("Runtime.enable"),
                            command("Audits.enable")]
            if !task.traceIDs.isEmpty {
                let fetch = command("Fetch.enable", .object([
                    "patterns": .array([.object(["urlPattern": .string("*"), "requestStage": .string("Request")])]),
                ]))
                fetchEnable = fetch.id
                commands.append(fetch)
            }
            phase = .enabling(waiting: Set(commands.map(\.id)))
            return commands
        case .enabling(var waiting) where waiting.contains(id):
            if case .failure(let error) = result {
                // Fetch is optional: without it the browser's requests go untraced.
                guard id == fetchEnable else { return refused("enabling DevTools domains", result) }
                run.trace = .unavailable("Fetch.enable failed: \(error.message)")
            }
            waiting.remove(id)
            guard waiting.isEmpty else {
                phase = .enabling(waiting: waiting)
                return []
            }
            let navigate = command("Page.navigate", .object(["url": .string(task.loginURL)]))
            phase = .loadingLoginPage(navigate: navigate.id)
            note("opened \(task.loginURL)")
            return [navigate]
        case .loadingLoginPage(let expected) where expected == id:
            switch result {
            case .failure:
                return refused("Page.navigate", result)
            case .success(let value):
                if let error = value["errorText"]?.string, !error.isEmpty {
                    finish(.navigationFailed(url: task.loginURL, netError: error))
                }
                return []
            }
        case .readingLoginBody(let expected) where expected == id:
            if case .success(let value) = result { run.loginPageBody = BrowserSignIn.body(value) }
            return fill()
        case .filling(let expected) where expected == id:
            return filled(result)
        case .settling(let expected, let failure) where expected == id:
            finish(failure)
            return []
        case .readingResultBody(let expected) where expected == id:
            if case .success(let value) = result { run.credentialsBody = BrowserSignIn.body(value) }
            let page = run.credentialsExchange
            finish(.noCallback(url: page?.url ?? "(unknown)", status: page?.status))
            return []
        default:
            return []
        }
    }

    private mutating func refused(_ what: String, _ result: Result<LocatedJSON, CDPCommandError>) -> [CDPCommand] {
        switch result {
        case .failure(let error): finish(.protocolError("\(what) refused: \(error)"))
        case .success: finish(.protocolError("\(what) answered without the expected result"))
        }
        return []
    }

    /// A `Network.Request`'s body: its `postDataEntries` (base64), else its `postData` text.
    static func postData(_ request: LocatedJSON) -> [UInt8]? {
        let entries = request["postDataEntries"]?.elements.compactMap { $0["bytes"]?.string } ?? []
        if !entries.isEmpty {
            return entries.reduce(into: [UInt8]()) { bytes, entry in bytes += Data(base64Encoded: entry).map(Array.init) ?? [] }
        }
        return request["postData"]?.string.map { Array($0.utf8) }
    }

    /// `Network.getResponseBody`'s answer, decoded.
    static func body(_ value: LocatedJSON) -> [UInt8]? {
        guard let text = value["body"]?.string else { return nil }
        if value["base64Encoded"]?.bool == true {
            return Data(base64Encoded: text).map(Array.init)
        }
        return Array(text.utf8)
    }

    // MARK: Events

    private mutating func event(_ method: String, _ params: LocatedJSON) -> [CDPCommand] {
        switch method {
        case "Fetch.requestPaused":
            return paused(params)
        case "Network.requestWillBeSent":
            return requestWillBeSent(params)
        case "Network.requestWillBeSentExtraInfo":
            requestExtraInfo(params)
        case "Network.responseReceived":
            responseReceived(params)
        case "Network.responseReceivedExtraInfo":
            responseExtraInfo(params)
        case "Network.loadingFailed":
            return loadingFailed(params)
        case "Network.loadingFinished":
            return loadingFinished(params)
        case "Page.loadEventFired":
            loadEventSeen = true
            return maybeReadLoginBody()
        case "Page.frameNavigated":
            frameNavigated(params)
        case "Audits.issueAdded":
            issue(params)
        case "Inspector.targetCrashed", "Target.targetCrashed":
            finish(.pageCrashed(lastActivity: run.lastActivity))
        case "Target.detachedFromTarget":
            finish(.pageCrashed(lastActivity: run.lastActivity + " (then the tab was detached)"))
        default:
            break
        }
        return []
    }

    /// Fetch interception: the main frame's page requests get the next trace id; every other goes on unchanged.
    private mutating func paused(_ params: LocatedJSON) -> [CDPCommand] {
        guard let fetchID = params["requestId"]?.string else { return [] }
        let isPage = params["resourceType"]?.string == "Document" && (params["frameId"]?.string ?? targetID) == targetID
        // The login page's hops (a redirect chain, HSTS's internal 307) carry the login page's id, the
        // submission's hops the credentials' id: the server echoes the id of the step it answers.
        let step: Int
        switch phase {
        case .loadingLoginPage: step = 0
        case .filling, .awaitingCallback: step = 1
        default: step = task.traceIDs.count
        }
        guard isPage, step < task.traceIDs.count, let request = params["request"] else {
            return [command("Fetch.continueRequest", .object(["requestId": .string(fetchID)]))]
        }
        let trace = task.traceIDs[step]
        var headers = request["headers"]?.stringPairs.filter { $0.name.lowercased() != task.traceFieldName.lowercased() } ?? []
        headers.append((task.traceFieldName, trace))
        if let network = params["networkId"]?.string, let index = current[network] { run.exchanges[index].traceID = trace }
        pendingTrace[request["url"]?.string ?? ""] = trace
        return [command("Fetch.continueRequest", .object([
            "requestId": .string(fetchID),
            "headers": .array(headers.map { .object(["name": .string($0.name), "value": .string($0.value)]) }),
        ]))]
    }

    /// Trace ids given to paused page requests whose `requestWillBeSent` had not come yet, by URL.
    private var pendingTrace: [String: String] = [:]

    private mutating func requestWillBeSent(_ params: LocatedJSON) -> [CDPCommand] {
        guard let id = params["requestId"]?.string, let request = params["request"],
              let url = request["url"]?.string else { return [] }
        let type = params["type"]?.string ?? "Other"
        let frame = params["frameId"]?.string
        let isMain = type == "Document" && (frame == nil || frame == targetID)
        if let redirect = params["redirectResponse"], let index = current[id] {
            apply(response: redirect, to: index)
            run.exchanges[index].ended = params["timestamp"]?.double
            run.exchanges[index].redirectedTo = url
            let from = run.exchanges[index].url
            note("was redirected from \(from) (\(run.exchanges[index].status.map(String.init) ?? "?")) to \(url)")
            if run.exchanges[index].status == 307, run.exchanges[index].responseField("Non-Authoritative-Reason") == "HSTS" {
                run.findings.append(.hstsUpgrade(from: from, to: url))
                // Made up inside the browser: no raw head (extra info) comes for it; the next response's is the next hop's.
                run.exchanges[index].responseIsRaw = true
            }
        }
        if isMain, BrowserSignIn.scheme(of: url) == task.callbackScheme.lowercased() {
            run.callbackURL = url
            note("was sent to the callback \(url)")
            finish(nil)
            return []
        }
        var exchange = BrowserExchange(requestID: id, url: url, method: request["method"]?.string ?? "GET",
                                       resourceType: type, isMainDocument: isMain)
        exchange.requestFields = request["headers"]?.stringPairs ?? []
        exchange.requestBody = BrowserSignIn.postData(request)
        exchange.started = params["timestamp"]?.double
        exchange.traceID = pendingTrace.removeValue(forKey: url)
        if let early = earlyRequestFields.removeValue(forKey: id) {
            exchange.requestFields = early
            exchange.requestFieldsAreFinal = true
        }
        run.exchanges.append(exchange)
        let index = run.exchanges.count - 1
        current[id] = index
        if isMain {
            switch phase {
            case .loadingLoginPage where run.loginPage == nil || run.exchanges[run.loginPage!].redirectedTo == url:
                // A redirect of the login page (a gateway's, HSTS's internal 307) moves it to the next hop.
                run.loginPage = index
            case .awaitingCallback, .filling:
                run.credentials = index
            default:
                break
            }
        }
        // `data:` URLs (the default favicon) are no network request: kept, not narrated.
        if BrowserSignIn.scheme(of: url) != "data" { note("requested \(exchange.method) \(url)") }
        return []
    }

    private mutating func requestExtraInfo(_ params: LocatedJSON) {
        guard let id = params["requestId"]?.string, let headers = params["headers"] else { return }
        if let index = current[id], !run.exchanges[index].requestFieldsAreFinal {
            run.exchanges[index].requestFields = headers.stringPairs
            run.exchanges[index].requestFieldsAreFinal = true
        } else {
            earlyRequestFields[id] = headers.stringPairs
        }
    }

    private mutating func responseReceived(_ params: LocatedJSON) {
        guard let id = params["requestId"]?.string, let index = current[id], let response = params["response"] else { return }
        apply(response: response, to: index)
    }

    /// Status, fields and protocol from a `Network.Response` (the raw fields of extra info win).
    private mutating func apply(response: LocatedJSON, to index: Int) {
        run.exchanges[index].status = response["status"]?.int ?? run.exchanges[index].status
        run.exchanges[index].protocolName = response["protocol"]?.string ?? run.exchanges[index].protocolName
        if !run.exchanges[index].responseIsRaw {
            run.exchanges[index].responseFields = response["headers"]?.stringPairs ?? []
        }
    }

    private mutating func responseExtraInfo(_ params: LocatedJSON) {
        guard let id = params["requestId"]?.string else { return }
        // The earliest hop of this request still without its raw head (a redirect's
        // extra info comes before the `requestWillBeSent` that ends the hop).
        guard let index = run.exchanges.indices.first(where: {
            run.exchanges[$0].requestID == id && !run.exchanges[$0].responseIsRaw
        }) else { return }
        run.exchanges[index].responseFields = params["headers"]?.stringPairs ?? []
        run.exchanges[index].responseIsRaw = true
        run.exchanges[index].responseHeadText = params["headersText"]?.string
        if let status = params["statusCode"]?.int { run.exchanges[index].status = status }
        for blocked in params["blockedCookies"]?.elements ?? [] {
            let line = blocked["cookieLine"]?.string ?? ""
            let name = blocked["cookie"]?["name"]?.string ?? String(line.prefix { $0 != "=" })
            let cookie = BlockedCookie(name: name, reasons: blocked["blockedReasons"]?.elements.compactMap(\.string) ?? [],
                                       line: line)
            run.exchanges[index].blockedCookies.append(cookie)
            run.findings.append(.cookieRefused(cookie, url: run.exchanges[index].url))
            note("refused cookie \(name) (\(cookie.explanation))")
        }
    }

    private mutating func loadingFailed(_ params: LocatedJSON) -> [CDPCommand] {
        guard let id = params["requestId"]?.string, let index = current[id] else { return [] }
        let error = params["errorText"]?.string ?? "net::ERR_FAILED"
        run.exchanges[index].netError = error
        run.exchanges[index].ended = params["timestamp"]?.double
        run.exchanges[index].blockedReason = params["blockedReason"]?.string
        let exchange = run.exchanges[index]
        note("failed to load \(exchange.url): \(error)\(exchange.blockedReason.map { " (blocked: \($0))" } ?? "")")
        guard exchange.isMainDocument else { return [] }
        if exchange.blockedReason == "csp", !run.findings.contains(where: {
            if case .contentSecurityPolicy = $0 { return true } else { return false }
        }) {
            run.findings.append(.contentSecurityPolicy(directive: "(a directive)", blockedURL: exchange.url, page: exchange.url))
        }
        switch phase {
        case .loadingLoginPage, .readingLoginBody:
            finish(.navigationFailed(url: exchange.url, netError: error))
        case .awaitingCallback, .filling:
            // A redirect to the callback is caught in requestWillBeSent before the browser cancels it.
            let barrier = command("Runtime.evaluate", .object(["expression": .string("0")]))
            phase = .settling(command: barrier.id, failure: .navigationFailed(url: exchange.redirectedTo ?? exchange.url, netError: error))
            return [barrier]
        default:
            break
        }
        return []
    }

    private mutating func loadingFinished(_ params: LocatedJSON) -> [CDPCommand] {
        guard let id = params["requestId"]?.string, let index = current[id] else { return [] }
        run.exchanges[index].ended = params["timestamp"]?.double
        let exchange = run.exchanges[index]
        guard exchange.isMainDocument else { return [] }
        note("loaded \(exchange.url) (\(exchange.status.map(String.init) ?? "no status"))")
        switch phase {
        case .loadingLoginPage where index == run.loginPage:
            mainDocumentDone = true
            return maybeReadLoginBody()
        case .awaitingCallback where index == run.credentials:
            let read = command("Network.getResponseBody", .object(["requestId": .string(id)]))
            phase = .readingResultBody(command: read.id)
            return [read]
        default:
            return []
        }
    }

    /// Once the login page's document finished and the page fired `load`: read its body.
    private mutating func maybeReadLoginBody() -> [CDPCommand] {
        guard case .loadingLoginPage = phase, mainDocumentDone, loadEventSeen,
              let index = run.loginPage else { return [] }
        let read = command("Network.getResponseBody", .object(["requestId": .string(run.exchanges[index].requestID)]))
        phase = .readingLoginBody(command: read.id)
        return [read]
    }

    /// The main frame committed an error page (`chrome-error://…` with the URL it could not
    /// reach) after the submission: a navigation stopped before any request DevTools
    /// reported (the insecure-form warning), so no `loadingFailed` of a known request ends the run.
    private mutating func frameNavigated(_ params: LocatedJSON) {
        guard let frame = params["frame"], frame["parentId"] == nil, (frame["id"]?.string ?? targetID) == targetID,
              let unreachable = frame["unreachableUrl"]?.string else { return }
        switch phase {
        case .filling, .awaitingCallback:
            break
        default:
            return
        }
        let page = run.loginPageExchange?.url ?? task.loginURL
        let insecure = run.findings.contains {
            if case .mixedContent(let url, _) = $0 { return url == unreachable } else { return false }
        }
        note("showed an error page for \(unreachable)")
        finish(insecure ? .insecureFormBlocked(action: unreachable, page: page)
                        : .navigationFailed(url: unreachable, netError: "the browser showed its error page"))
    }

    /// Audits: cookie issues repeat what extra info said; CSP violations and mixed content are only here.
    private mutating func issue(_ params: LocatedJSON) {
        if let details = params["issue"]?["details"]?["mixedContentIssueDetails"], let insecure = details["insecureURL"]?.string {
            let page = details["mainResourceURL"]?.string ?? run.loginPageExchange?.url ?? task.loginURL
            run.findings.append(.mixedContent(insecureURL: insecure, page: page))
            note("found the http URL \(insecure) on the https page (\(details["resolutionStatus"]?.string ?? "mixed content"))")
            return
        }
        guard let issue = params["issue"], issue["code"]?.string == "ContentSecurityPolicyIssue",
              let details = issue["details"]?["contentSecurityPolicyIssueDetails"] else { return }
        let directive = details["violatedDirective"]?.string ?? "(unknown directive)"
        let blocked = details["blockedURL"]?.string ?? "(unknown URL)"
        let page = details["sourceCodeLocation"]?["url"]?.string ?? run.loginPageExchange?.url ?? task.loginURL
        run.findings.removeAll {
            if case .contentSecurityPolicy(let d, _, _) = $0 { return d == "(a directive)" } else { return false }
        }
        run.findings.append(.contentSecurityPolicy(directive: directive, blockedURL: blocked, page: page))
        note("was stopped by Content-Security-Policy \(directive) from going to \(blocked)")
    }

    // MARK: The form

    private mutating func fill() -> [CDPCommand] {
        let evaluate = command("Runtime.evaluate", .object([
            "expression": .string(BrowserFormScript.source(username: task.username, password: task.password)),
            "returnByValue": .bool(true),
        ]))
        phase = .filling(command: evaluate.id)
        return [evaluate]
    }

    private mutating func filled(_ result: Result<LocatedJSON, CDPCommandError>) -> [CDPCommand] {
        guard case .success(let value) = result, let text = value["result"]?["value"]?.string,
              let report = try? LocatedJSON.parse(Array(text.utf8)) else {
            let detail = (try? result.get())?["exceptionDetails"]?["text"]?.string
            return refused("filling the form\(detail.map { " (\($0))" } ?? "")", result)
        }
        let form = BrowserFormFill(forms: report["forms"]?.int ?? 0,
                                   fields: report["fields"]?.elements.compactMap(\.string) ?? [],
                                   usernameField: report["user"]?.string, passwordField: report["password"]?.string,
                                   submitted: report["submitted"]?.bool ?? false, title: report["title"]?.string ?? "")
        run.form = form
        let page = run.loginPageExchange
        guard form.forms > 0 else {
            finish(.noForm(url: page?.url ?? task.loginURL, status: page?.status, title: form.title))
            return []
        }
        let filledFields = [form.usernameField, form.passwordField].compactMap { $0 }
        guard form.passwordField != nil else {
            finish(.missingField("password", fields: form.fields, filled: filledFields))
            return []
        }
        guard form.usernameField != nil else {
            finish(.missingField("user-name", fields: form.fields, filled: filledFields))
            return []
        }
        note("filled \(filledFields.joined(separator: " and ")) and submitted the form")
        phase = .awaitingCallback
        return []
    }

    // MARK: Helpers

    private mutating func command(_ method: String, _ params: CDPValue = .empty, session attached: Bool = true) -> CDPCommand {
        nextID += 1
        return CDPCommand(id: nextID, method: method, params: params, sessionID: attached ? session : nil)
    }

    private mutating func note(_ line: String) {
        run.activity.append(line)
        if run.activity.count > 64 { run.activity.removeFirst(run.activity.count - 64) }
    }

    private mutating func finish(_ failure: BrowserFailure?) {
        guard !isFinished else { return }
        run.failure = failure
        if let failure { note("stopped: \(failure)") }
        phase = .finished
    }

    /// The lowercased scheme of a URL (`com.appian.tempo` of `com.appian.tempo://…`), nil without one.
    public static func scheme(of url: String) -> String? {
        guard let colon = url.firstIndex(of: ":") else { return nil }
        return url[..<colon].lowercased()
    }
}
