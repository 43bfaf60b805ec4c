import AuthFlow
import Browser
import Evidence
import Foundation
import HTTP
import TLS
import Transport

/// Where the browser plugs into the runner: each agent's path (the app's
/// proxy, the browser's own when it differs: per-app VPN), and steps 6–8
/// handed to Chromium when the configuration asks for the real browser.
extension ClientRunner {
    /// The forward proxy `agent`'s connections go through, nil for direct.
    func proxy(for agent: FlowAgent) -> ForwardProxy? {
        guard agent == .browser else { return configuration.proxy }
        switch configuration.browserPath {
        case .sameAsApp: return configuration.proxy
        case .direct: return nil
        case .proxy(let proxy): return proxy
        }
    }

    /// The two paths, for diagnoses that name the split.
    var paths: AgentPaths {
        func phrase(_ proxy: ForwardProxy?) -> String { proxy.map { "through proxy \($0)" } ?? "directly" }
        let app = proxy(for: .app)
        let browser = proxy(for: .browser)
        let appHasCertificate = configuration.clientIdentity != nil
        let browserHasCertificate: Bool
        switch configuration.browser {
        case .chromium:
            if case .identity = configuration.browserIdentity { browserHasCertificate = true } else { browserHasCertificate = false }
        case .simulated:
            switch configuration.browserIdentity {
            case .sameAsApp: browserHasCertificate = appHasCertificate
            case .none: browserHasCertificate = false
            case .identity: browserHasCertificate = true
            }
        }
        return AgentPaths(app: phrase(app), browser: phrase(browser), differ: app != browser,
                          appHasCertificate: appHasCertificate && !browserHasCertificate)
    }

    /// The Chromium settings for this run: the browser's path, the CA the
    /// client trusts (a PEM file), HTTP/1.1 only when the client offers only
    /// that, the names `--resolve` maps, and the browser's own client
    /// certificate (`--browser-client-cert`), presented unasked to `loginURL`'s origin.
    func chromiumSettings(_ base: ChromiumSettings, loginURL: AbsoluteURL) throws -> ChromiumSettings {
        var settings = base
        settings.path = proxy(for: .browser).map { .forwardProxy(host: $0.host, port: $0.port) } ?? .direct
        if settings.trustedCA == nil, case .caFile(let file) = configuration.trust { settings.trustedCA = file }
        if configuration.protocols == .http1Only { settings.http1Only = true }
        settings.hostMappings += configuration.resolve.chromiumRules
        if case .identity(let identity) = configuration.browserIdentity {
            let password = (0..<16).map { _ in String(UInt8.random(in: 0...255), radix: 16) }.joined()
            settings.clientCertificate = ChromiumClientCertificate(
                pkcs12: try PKCS12.export(identity: identity, password: password, friendlyName: "Intact browser certificate"),
                password: password, issuerCommonName: ClientRunner.commonName(inDistinguishedName: identity.certificate.issuer),
                origins: [loginURL.origin.serialized])
        }
        return settings
    }

    /// The `CN` of an RFC 2253 distinguished name (`CN=intact demo CA,O=Intact`), unescaped; nil without one.
    static func commonName(inDistinguishedName name: String) -> String? {
        var components: [String] = [""]
        var escaped = false
        for character in name {
            if escaped {
                components[components.count - 1].append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "," || character == "+" {
                components.append("")
            } else {
                components[components.count - 1].append(character)
            }
        }
        return components.first { $0.hasPrefix("CN=") }.map { String($0.dropFirst(3)) }
    }

    /// Steps 6–8 in Chromium: the login URL of `request`, the user's
    /// credentials, the trace ids of the two page requests. When it ends,
    /// its run goes through the flow (`BrowserSteps`) on the loop.
    func runRealBrowser(_ base: ChromiumSettings, for request: FlowRequest) {
        let settings: ChromiumSettings
        do {
            settings = try chromiumSettings(base, loginURL: request.url)
        } catch {
            var run = BrowserRun()
            run.failure = .launch("cannot give the browser its client certificate: \(error)")
            return browserFinished(run, started: .now)
        }
        let task = BrowserSignIn.Task(loginURL: request.url.serialized, callbackScheme: flow.configuration.callbackScheme,
                                      username: flow.configuration.username, password: flow.configuration.password,
                                      traceFieldName: SignInFlow.traceFieldName, traceIDs: flow.browserTraceIDs)
        let browser = ChromiumBrowser(settings: settings)
        realBrowser = browser
        let started = ContinuousClock.now
        browser.signIn(task) { [self] run in
            loop.execute { [self] in browserFinished(run, started: started) }
        }
    }

    private func browserFinished(_ run: BrowserRun, started: ContinuousClock.Instant) {
        realBrowser = nil
        let before = flow.results.count
        BrowserSteps.apply(run, to: &flow, paths: paths, elapsed: seconds(since: started))
        exchangeNumber += max(0, flow.results.count - before)
        recordBrowserView(run)
        recordBrowserExchanges(run, steps: Array(flow.results[before...]))
        for result in flow.results[before...] { onStep?(result) }
        sendNext()
    }

    /// The browser's own view beside the client's recording
    /// (`NAME.browser.json`): every request and response as DevTools
    /// reported them, what it refused, what it did last. Its exchanges are
    /// not in the client's recording: DevTools gives header fields sorted
    /// by name, not as sent, so their digests could not be compared.
    private func recordBrowserView(_ run: BrowserRun) {
        guard let recorder else { return }
        let path = ClientRunner.browserViewPath(forRecording: recorder.path)
        FileManager.default.createFile(atPath: path, contents: Data(run.jsonBytes))
    }
}

extension ClientRunner {
    /// Where the browser's own view goes beside a client recording: `client.jsonl` → `client.browser.json`.
    public static func browserViewPath(forRecording path: String) -> String {
        (path as NSString).deletingPathExtension + ".browser.json"
    }
}

extension BrowserSteps {
    /// A failure at a browser step on a path the app does not share is
    /// the split's: a foreign answer or a failed connection there becomes
    /// `browser-off-path` (the VPN sentence), a client-certificate challenge
    /// `browser-client-cert` when the app holds a certificate the browser lacks.
    static func attributingToSplit(_ outcome: FlowOutcome, paths: AgentPaths) -> FlowOutcome {
        guard var diagnosis = outcome.diagnosis, [.loginPage, .credentials].contains(diagnosis.step) else { return outcome }
        var mode: FailureMode?
        var sentence: DocumentSentence?
        switch diagnosis.mode {
        case .clientCertRequired where paths.appHasCertificate:
            mode = .browserClientCert
            sentence = .certificateGateway
        case .foreignResponse, .transportFailure, .authRedirect, .unexpectedResponse, .gatewayCookie:
            guard paths.differ else { break }
            mode = .browserOffPath
            sentence = .perAppVPN
        default:
            break
        }
        guard let mode, let sentence else { return outcome }
        let split = mode == .browserClientCert
            ? "the app holds a client certificate, the browser does not"
            : "the app reaches the server \(paths.app), the browser goes \(paths.browser)"
        diagnosis = Diagnosis(mode: mode, step: diagnosis.step, evidence: "\(diagnosis.evidence); \(split)", sentence: sentence)
        var attributed = outcome
        attributed.diagnosis = diagnosis
        return attributed
    }
}

extension ClientRunner {
    /// Records the browser's two page exchanges (the login page, the
    /// credentials POST and its redirect) in the client's recording, so the
    /// verifier pairs them with the proxy's and the server's by their trace
    /// id. Rebuilt from DevTools: the fields as DevTools listed them (sorted
    /// by name, HTTP/2 pseudo-fields apart), an HTTP/1.1 response head from
    /// its raw text; so a hop from the browser compares at best
    /// `equivalent`, never byte-`identical`. The browser's other requests
    /// (the favicon) are left out: DevTools does not hand over their bodies
    /// unasked, so their digests would not match; the proxy's and the
    /// server's taps list them as requests no client recorded (they carry
    /// no trace id). NAME.browser.json has them.
    func recordBrowserExchanges(_ run: BrowserRun, steps: [StepResult]) {
        guard let recorder else { return }
        let settings = recorder.settings
        let pages: [(Int?, FlowStep, [UInt8])] = [
            (run.loginPage, .loginPage, run.loginPageBody ?? []),
            (run.credentials, .credentials, run.credentialsBody ?? []),
        ]
        for case (let index?, let step, let body) in pages {
            let exchange = run.exchanges[index]
            guard let url = AbsoluteURL(exchange.url) else { continue }
            let isHTTP2 = exchange.protocolName == "h2"
            let regular = exchange.requestFields.filter { !$0.name.hasPrefix(":") }.map { HTTPField(name: $0.name, value: $0.value) }
            var head = HTTPRequestHead(method: HTTPMethod(exchange.method), scheme: url.origin.scheme, authority: url.origin.authority,
                                       path: url.pathAndQuery, fields: HTTPFields(regular))
            head.version = isHTTP2 ? .http2 : .http1_1
            let requestWire: HeadDigest.WireForm = isHTTP2 ? .http2Request(head)
                : .http1(head: Array((["\(exchange.method) \(url.pathAndQuery) HTTP/1.1"] + regular.map { "\($0.name): \($0.value)" })
                    .map { $0 + "\r\n" }.joined().utf8))
            let now = Timestamp.now()
            var request = MessageObservation(request: head, wire: requestWire, connectionScheme: "https",
                                             storeLimit: settings.bodyStoreLimit, using: settings.redaction.digests,
                                             start: now, headersDone: now)
            request.append(exchange.requestBody ?? [])
            var recordedResponse: RecordedMessage?
            if let response = BrowserSteps.head(of: exchange) {
                let responseWire: HeadDigest.WireForm
                if let text = exchange.responseHeadText, !isHTTP2 {
                    responseWire = .http1(head: Array(text.utf8.dropLast(2)))
                } else {
                    responseWire = .http2(fields: [HTTPField(name: ":status", value: String(response.status.code))]
                                          + response.fields.map { HTTPField(name: $0.lowercasedName, value: $0.value) })
                }
                let travelled = response.travelled(as: responseWire)
                var observation = MessageObservation(response: travelled, wire: responseWire, storeLimit: settings.bodyStoreLimit,
                                                     using: settings.redaction.digests, start: nil, headersDone: nil)
                if exchange.status.map({ !(300..<400).contains($0) }) ?? false { observation.append(body) }
                recordedResponse = observation.finish(end: now, redaction: settings.redaction)
            }
            let label = steps.last { $0.step == step }?.label.rawValue
            let failure = exchange.netError.map { error in
                ExchangeRecord.Failure(kind: error.contains("TIMED_OUT") ? .timeout : error.contains("SSL") || error.contains("CERT") ? .tls
                                           : error.contains("REFUSED") ? .connectionRefused : .closedEarly,
                                       location: "browser", message: error)
            }
            recorder.record(traceID: exchange.traceID, step: label,
                            connectionID: "\(configuration.flow.traceRunID ?? "run")-chromium",
                            tls: nil, request: request.finish(end: now, redaction: settings.redaction),
                            response: recordedResponse, error: failure)
        }
    }
}
