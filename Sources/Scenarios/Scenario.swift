import AuthFlow
import ConfigurationFile
import Evidence
import Foundation

/// One load balancer scenario: a directory holding `scenario.json` (what
/// the scenario is and what it must produce), the load balancer's
/// configuration template, and any file the configuration uses (an error
/// page) or the verification uses (a policy file).
///
/// `scenario.json`:
///
///     {
///       "summary": "nginx hides Set-Cookie",
///       "intermediary": "nginx",                 // a kind of `IntermediaryKind.names` ("loadBalancer" is the same key)
///       "config": "nginx.conf",                  // optional: the kind's default file name
///       "files": ["remap.config"],               // optional: more templates, rendered next to the configuration
///       "command": {"run": ["envoy", "-c", "{{CONFIG}}"], // only for "command": the product's own commands
///                   "check": ["envoy", "--mode", "validate", "-c", "{{CONFIG}}"],
///                   "name": "Envoy", "packages": ["envoy"], "forward": false, "plainUpstream": false},
///       "breaks": "Step 11 … (the sentence)",    // optional: what it breaks
///       "policy": "policy.json",                 // optional: verify policy (default strict)
///       "tapA": {"clientCertificate": true,      // optional: tap A presents a client certificate,
///                "plainHTTP": true,              //   speaks plain HTTP to the load balancer,
///                "recordSecrets": true,          //   records cookies in clear,
///                "faults": ["strip-set-cookie"],  //   injects fault presets (`intact proxy --fault`)
///                "faultRules": "rules.json"},    //   and a fault rule file (`intact proxy --faults`)
///       "tapB": {"recordSecrets": true, "faults": []},   // optional: the same for tap B
///       "client": {"requestFields": ["Accept-Encoding: gzip, deflate", "User-Agent:"],
///                  "runs": 2, "host": "localhost"}, // optional: fields the client sends on every request
///                                                //   (`intact client --request-field`; `NAME:` sends none);
///                                                //   the client run again as another app (1 to 4 runs);
///                                                //   the server's host in its URL (default 127.0.0.1)
///       "server": {"gzip": true},                // optional: the mock server gzips for clients that accept it
///       "expect": {
///         "client": {"succeeds": false, "diagnosis": "strip-set-cookie", "step": "token-exchange"},
///         "verify": {"holds": false, "exchange": "bootstrap", "verdict": "modified",
///                    "difference": {"message": "response", "kind": "field-removed", "field": "set-cookie"},
///                    "differences": [{"message": "response", "kind": "cookie-changed", "field": "set-cookie",
///                                     "cookie": "JSESSIONID", "text": "JSESSIONID: Path changed (/suite → /)"}],
///                    "cachedCopy": true,          // optional: the answer there is a copy of another exchange's
///                    "failure": "no client certificate"} // optional: a recorded failure attached there says this
///       }
///     }
///
/// A verification that holds may say `"tolerated": ["via"]` (fields that must
/// show as tolerated) and `"intermediaryRequests": N` (at least N requests the
/// load balancer made itself must be listed: its health checks).
///
/// The two expectations name exchanges in their own words:
/// - `expect.client.step` is the client's step (`FlowStep`: `protected-request`,
///   `login-page`, `credentials`, `token-exchange`, `follow-up`), which is what
///   `intact client` prints and its diagnosis names;
/// - `expect.verify.exchange` is the exchange's label as the taps record it
///   and the report groups by it (`AuthStep`: `unauthenticated-request`,
///   `challenge-401`, `login-page`, `credentials-post`, `callback-redirect`,
///   `token-post`, `bootstrap`, `authenticated-request`, …), taken from the
///   tap nearest the client. A label depends on the answer the client got:
///   the first request is `challenge-401` when answered 401 and
///   `unauthenticated-request` otherwise (a maintenance page).
///
/// Loading checks everything that can be checked without running a process
/// (keys, names, that the files exist, the policy parses), so a mistake is
/// reported before anything starts.
public struct Scenario: Hashable, Sendable {
    /// The manifest's file name.
    public static let manifestFileName = "scenario.json"

    /// `nginx/hide-set-cookie`: the directory's parent and own name.
    public var name: String
    /// Absolute path of the scenario's directory.
    public var directory: String
    public var summary: String
    /// The sentence of the document the configuration breaks, and how; nil for a good configuration.
    public var breaks: String?
    /// The product between the taps, and how to run it.
    public var intermediary: IntermediaryKind
    /// Absolute path of the configuration template.
    public var configFile: String
    /// Absolute paths of the scenario's other templates, rendered next to the configuration.
    public var files: [String] = []
    /// Whether the configuration template uses `{{LISTEN}}` (HAProxy then takes the runner's socket as `fd@3`).
    public var configBindsListen = false
    /// Absolute path of the verification policy; nil for `strict`.
    public var policyFile: String?
    /// Whether tap A presents a client certificate issued by the run's CA to the load balancer.
    public var tapAPresentsClientCertificate: Bool
    /// How tap A (in front of the load balancer) and tap B (behind it) run.
    public var tapA = ScenarioTapOptions()
    public var tapB = ScenarioTapOptions()
    /// Changes to the fields the client sends on every request (its defaults:
    /// `Accept-Encoding: gzip` and a `User-Agent`), in order.
    public var clientRequestFields: [RequestFieldSetting] = []
    /// Who plays the browser (`client.browser`: `simulated` or `chromium`) and
    /// the browser's own path (`client.browserProxy`: `direct` or a proxy URL),
    /// as `intact client` options.
    public var clientBrowserArguments: [String] = []
    /// How many times the client runs, one after the other, each as another
    /// app with its own recording (`client.runs`, 1 to 4; two apps behind a
    /// cache). `expect.client` is the last run's; every earlier run must sign in.
    public var clientRuns = 1
    /// The host the client names the server by (`client.host`): `127.0.0.1`,
    /// or `localhost` for an intermediary that certifies host names only (a
    /// TLS-inspecting Squid mints a certificate naming no IP address when it
    /// has no server certificate to copy). Every process still listens on 127.0.0.1.
    public var clientHost = ScenarioPlan.loopbackHost
    /// Whether the mock server gzip-encodes its answers to clients that accept gzip (`intact server --gzip`).
    public var serverGzips = false
    public var expectation: ScenarioExpectation

    /// Reads and checks the scenario in `directory`. Blocks on disk I/O.
    public static func load(from directory: String) throws(ScenarioError) -> Scenario {
        let root = URL(fileURLWithPath: directory).standardizedFileURL.path
        let manifest = root + "/" + manifestFileName
        guard FileManager.default.fileExists(atPath: manifest) else {
            throw .manifestMissing(directory: directory)
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: manifest))
        } catch {
            throw .manifest(ConfigurationError(kind: .unreadable(error.localizedDescription), position: nil, path: "",
                                               file: manifest))
        }
        var scenario: Scenario
        do {
            scenario = try ConfigurationError.inFile(manifest) { () throws(ConfigurationError) -> Scenario in
                try ScenarioManifestReader(directory: root).scenario(LocatedJSON.parse(Array(data)))
            }
        } catch {
            throw .manifest(error)
        }
        for file in [scenario.configFile] + scenario.files where !FileManager.default.fileExists(atPath: file) {
            throw .configMissing(file: file)
        }
        scenario.configBindsListen = (try? String(contentsOfFile: scenario.configFile, encoding: .utf8))?
            .contains("{{LISTEN}}") ?? false
        for rules in [scenario.tapA.faultRules, scenario.tapB.faultRules].compactMap({ $0 })
            where !FileManager.default.fileExists(atPath: rules) {
            throw .configMissing(file: rules)
        }
        if let policy = scenario.policyFile {
            do {
                _ = try VerificationPolicy.load(path: policy)
            } catch {
                var named = error
                named.context = "the policy of \(manifest)"
                throw .manifest(named)
            }
        }
        scenario.name = root.split(separator: "/").suffix(2).joined(separator: "/")
        return scenario
    }
}

/// Reads the JSON object of `scenario.json`, checking every field, type and
/// name. Each object's fields are declared once, in the lists below; adding
/// a field is adding it there and reading it where the object is read.
private struct ScenarioManifestReader {
    let directory: String

    static let scenarioFields = ["summary", "intermediary", "loadBalancer", "config", "files", "command", "breaks", "policy",
                                 "tapA", "tapB", "client", "server", "expect"]
    static let commandFields = ["name", "packages", "check", "run", "forward", "plainUpstream"]
    static let clientSettingsFields = ["requestFields", "browser", "browserProxy", "runs", "host"]
    static let serverSettingsFields = ["gzip"]
    static let tapAFields = ["clientCertificate", "plainHTTP", "recordSecrets", "faults", "faultRules"]
    static let tapBFields = ["recordSecrets", "faults", "faultRules"]
    static let expectFields = ["client", "verify", "tls"]
    static let clientFields = ["succeeds", "diagnosis", "step"]
    static let verifyFields = ["holds", "tolerated", "intermediaryRequests", "exchange", "verdict", "difference", "differences",
                               "cachedCopy", "failure"]
    static let differenceFields = ["message", "kind", "field", "cookie", "text"]

    func scenario(_ json: LocatedJSON) throws(ConfigurationError) -> Scenario {
        let top = try JSONFieldReader(json, path: "", allowed: Self.scenarioFields)
        let summary = try top.required("summary", top.name)
        let kind = try intermediary(top)
        let config = try top.name("config") ?? kind.defaultConfigFileName
        let files = try top.strings("files") ?? []
        guard !files.contains(where: \.isEmpty) else { throw top.error(.invalid("expected file names"), "files") }
        let policy = try top.name("policy")
        let tapAReader = try top.object("tapA", allowed: Self.tapAFields)
        let presentsCertificate = try tapAReader?.bool("clientCertificate") ?? false
        var tapA = try tapOptions(tapAReader)
        tapA.plainHTTP = try tapAReader?.bool("plainHTTP") ?? false
        let tapB = try tapOptions(top.object("tapB", allowed: Self.tapBFields))
        let clientReader = try top.object("client", allowed: Self.clientSettingsFields)
        let requestFields = try clientReader.map(requestFieldSettings) ?? []
        var browserArguments: [String] = []
        if let browser = try clientReader?.choice("browser", among: ["simulated", "chromium"].map(ScenarioWord.init)) {
            browserArguments += ["--browser", browser.rawValue]
        }
        if let path = try clientReader?.name("browserProxy") { browserArguments += ["--browser-proxy", path] }
        let clientRuns = try clientReader?.int("runs", in: 1...4) ?? 1
        let clientHost = try clientReader?.choice("host", among: [ScenarioPlan.loopbackHost, "localhost"].map(ScenarioWord.init))?
            .rawValue ?? ScenarioPlan.loopbackHost
        let serverGzips = try top.object("server", allowed: Self.serverSettingsFields)?.bool("gzip") ?? false
        let expect = try object(top, "expect", Self.expectFields)
        let tls = try expect.choice("tls", ScenarioExpectation.TLSOutcome.self)
        if tls != nil && kind.topology != .forward {
            throw expect.error(.inconsistent("\"tls\" is for a forward intermediary (squid, tinyproxy)"), "tls")
        }
        let expectation = ScenarioExpectation(client: try clientOutcome(object(expect, "client", Self.clientFields)),
                                              verify: try verifyOutcome(object(expect, "verify", Self.verifyFields)), tls: tls)
        return Scenario(name: "", directory: directory, summary: summary, breaks: try top.name("breaks"),
                        intermediary: kind, configFile: resolve(config), files: files.map(resolve),
                        policyFile: policy.map(resolve),
                        tapAPresentsClientCertificate: presentsCertificate, tapA: tapA, tapB: tapB,
                        clientRequestFields: requestFields, clientBrowserArguments: browserArguments,
                        clientRuns: clientRuns, clientHost: clientHost, serverGzips: serverGzips, expectation: expectation)
    }

    /// `intermediary` (or its older name `loadBalancer`): a built-in kind, or
    /// `command` with the `command` object stating the product's commands.
    private func intermediary(_ top: JSONFieldReader) throws(ConfigurationError) -> IntermediaryKind {
        let key = top.has("intermediary") ? "intermediary" : "loadBalancer"
        if top.has("intermediary") && top.has("loadBalancer") {
            throw top.error(.inconsistent("give \"intermediary\" or its older name \"loadBalancer\", not both"), "loadBalancer")
        }
        let names = IntermediaryKind.names
        let name = try top.required(key) { (key: String) throws(ConfigurationError) in
            try top.choice(key, among: names.map(KindName.init(rawValue:)).compactMap { $0 })
        }.rawValue
        guard name == IntermediaryKind.commandKindName else {
            if top.has("command") {
                throw top.error(.inconsistent("\"command\" is only for \"\(key)\": \"command\""), "command")
            }
            return IntermediaryKind.named(name)!
        }
        let command = try object(top, "command", Self.commandFields)
        let run = try commandLine(command, "run")
        guard let run else { throw command.error(.missingField("run")) }
        let packages = try command.strings("packages") ?? []
        return .command(displayName: try command.name("name") ?? (run.program as NSString).lastPathComponent,
                        packages: packages, check: try commandLine(command, "check"), run: run,
                        topology: try command.bool("forward") ?? false ? .forward : .reverse,
                        upstreamTLS: !(try command.bool("plainUpstream") ?? false),
                        configFileName: "intermediary.conf")
    }

    /// A command line: a non-empty array of strings, the program first.
    private func commandLine(_ reader: JSONFieldReader, _ key: String) throws(ConfigurationError) -> CommandTemplate? {
        guard let words = try reader.strings(key) else { return nil }
        guard let program = words.first, !program.isEmpty else {
            throw reader.error(.invalid("expected the program, then its arguments"), key)
        }
        return CommandTemplate(program, Array(words.dropFirst()))
    }

    /// `client.requestFields`: each a `RequestFieldSetting` (`NAME: VALUE`, or `NAME:` to send none).
    private func requestFieldSettings(_ client: JSONFieldReader) throws(ConfigurationError) -> [RequestFieldSetting] {
        var settings: [RequestFieldSetting] = []
        for item in try client.array("requestFields") ?? [] {
            let kind: ConfigurationError.Kind
            if case .string(let text) = item.value.value {
                if let setting = RequestFieldSetting(parsing: text) {
                    settings.append(setting)
                    continue
                }
                kind = .invalid("\"\(text)\" is not a request field: expected \(RequestFieldSetting.expected)")
            } else {
                kind = .wrongType(expected: "a string", found: item.value.typeName)
            }
            throw ConfigurationError(kind: kind, position: item.value.position, context: client.context, path: item.path)
        }
        return settings
    }

    /// `recordSecrets` and `faults` (preset names, as `intact proxy --fault` takes them) of one tap.
    private func tapOptions(_ reader: JSONFieldReader?) throws(ConfigurationError) -> ScenarioTapOptions {
        guard let reader else { return ScenarioTapOptions() }
        let faults = try reader.strings("faults") ?? []
        guard !faults.contains(where: \.isEmpty) else { throw reader.error(.invalid("expected fault preset names"), "faults") }
        return ScenarioTapOptions(recordSecrets: try reader.bool("recordSecrets") ?? false, faults: faults,
                                  faultRules: try reader.name("faultRules").map(resolve))
    }

    private func clientOutcome(_ client: JSONFieldReader) throws(ConfigurationError) -> ScenarioExpectation.ClientOutcome {
        if try client.required("succeeds", client.bool) {
            guard !client.has("diagnosis"), !client.has("step") else {
                throw client.error(.inconsistent("a client that succeeds has no diagnosis or step"))
            }
            return .succeeds
        }
        return .fails(diagnosis: try choice(client, "diagnosis", FailureMode.allCases),
                      step: try choice(client, "step", FlowStep.allCases))
    }

    private func verifyOutcome(_ verify: JSONFieldReader) throws(ConfigurationError) -> ScenarioExpectation.VerifyOutcome {
        if try verify.required("holds", verify.bool) {
            guard !verify.has("exchange"), !verify.has("verdict"), !verify.has("difference"), !verify.has("differences"),
                  !verify.has("cachedCopy"), !verify.has("failure") else {
                throw verify.error(.inconsistent("a verification that holds has no failing exchange, verdict or difference"))
            }
            let tolerated = try verify.strings("tolerated") ?? []
            guard !tolerated.contains(where: \.isEmpty) else {
                throw verify.error(.invalid("expected non-empty field or cookie names"), "tolerated")
            }
            return .holds(tolerated: tolerated.map { $0.lowercased() },
                          intermediaryRequests: try verify.int("intermediaryRequests", in: 0...Int.max) ?? 0)
        }
        for key in ["tolerated", "intermediaryRequests"] where verify.has(key) {
            throw verify.error(.inconsistent("\"\(key)\" is only for a verification that holds"), key)
        }
        let step = try choice(verify, "exchange", AuthStep.allCases)
        let verdict = try choice(verify, "verdict", HopVerdict.allCases)
        guard !verdict.passes else {
            throw verify.error(.invalid("\"\(verdict.rawValue)\" passes the policy; expected a failing verdict"), "verdict")
        }
        var differences: [ScenarioExpectation.ExpectedDifference] = []
        if let fields = try verify.object("difference", allowed: Self.differenceFields) {
            differences.append(try expectedDifference(fields))
        }
        if let list = try verify.objects("differences", allowed: Self.differenceFields) {
            guard !list.isEmpty else { throw verify.error(.invalid("expected at least one difference"), "differences") }
            for fields in list { differences.append(try expectedDifference(fields)) }
        }
        let failure = try verify.name("failure")
        return .fails(ScenarioExpectation.ExpectedFailure(step: step, verdict: verdict, differences: differences,
                                                          cachedCopy: try verify.bool("cachedCopy") ?? false,
                                                          failure: failure))
    }

    private func expectedDifference(_ fields: JSONFieldReader) throws(ConfigurationError) -> ScenarioExpectation.ExpectedDifference {
        ScenarioExpectation.ExpectedDifference(
            message: try choice(fields, "message", ScenarioExpectation.ExpectedDifference.Message.allCases),
            kind: try choice(fields, "kind", MessageDifference.Kind.allCases),
            field: try fields.name("field")?.lowercased(), cookie: try fields.name("cookie"), text: try fields.name("text"))
    }

    // MARK: Values

    /// A required object field, read with its own fields.
    private func object(_ reader: JSONFieldReader, _ key: String, _ allowed: [String]) throws(ConfigurationError) -> JSONFieldReader {
        try reader.required(key) { (key: String) throws(ConfigurationError) in try reader.object(key, allowed: allowed) }
    }

    /// A required field whose value is the raw value of one of `known`.
    private func choice<Name: RawRepresentable>(_ reader: JSONFieldReader, _ key: String,
                                                _ known: [Name]) throws(ConfigurationError) -> Name
        where Name.RawValue == String {
        try reader.required(key) { (key: String) throws(ConfigurationError) in try reader.choice(key, among: known) }
    }

    private func resolve(_ relative: String) -> String {
        let url = relative.hasPrefix("/") ? URL(fileURLWithPath: relative)
            : URL(fileURLWithPath: directory).appendingPathComponent(relative)
        return url.standardizedFileURL.path
    }
}

/// A kind's name as `JSONFieldReader.choice` reads it.
private struct KindName: RawRepresentable {
    let rawValue: String
    init?(rawValue: String) { self.rawValue = rawValue }
}

/// How one tap of a scenario runs, beyond recording.
public struct ScenarioTapOptions: Hashable, Sendable {
    /// Record cookies and other secrets in clear (`--record-secrets`).
    public var recordSecrets = false
    /// Fault presets the tap injects (`--fault NAME[:key=value,...]`, one each).
    public var faults: [String] = []
    /// A fault rule file the tap injects (`--faults FILE`, format in `Examples/faults/`), absolute.
    public var faultRules: String?
    /// Tap A only: speak plain HTTP to the load balancer (`reverse:http://…`),
    /// for a load balancer that listens without TLS.
    public var plainHTTP = false

    public init(recordSecrets: Bool = false, faults: [String] = [], faultRules: String? = nil, plainHTTP: Bool = false) {
        self.recordSecrets = recordSecrets
        self.faults = faults
        self.faultRules = faultRules
        self.plainHTTP = plainHTTP
    }

    /// The `intact proxy` options these settings add.
    var proxyArguments: [String] {
        (recordSecrets ? ["--record-secrets"] : []) + faults.flatMap { ["--fault", $0] }
            + (faultRules.map { ["--faults", $0] } ?? [])
    }
}

/// A value among a fixed list of words (`client.browser`, `client.host`).
private struct ScenarioWord: RawRepresentable {
    let rawValue: String

    init(rawValue: String) {
        self.rawValue = rawValue
    }
}
