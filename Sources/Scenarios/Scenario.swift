import AuthFlow
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
///       "loadBalancer": "nginx",                 // or "haproxy"
///       "config": "nginx.conf",                  // optional: nginx.conf / haproxy.cfg
///       "breaks": "Step 11 … (the sentence)",    // optional: what it breaks
///       "policy": "policy.json",                 // optional: verify policy (default strict)
///       "tapA": {"clientCertificate": true,      // optional: tap A presents a client certificate,
///                "plainHTTP": true,              //   speaks plain HTTP to the load balancer,
///                "recordSecrets": true,          //   records cookies in clear,
///                "faults": ["strip-set-cookie"]},//   injects fault presets (`intact proxy --fault`)
///       "tapB": {"recordSecrets": true, "faults": []},   // optional: the same for tap B
///       "expect": {
///         "client": {"succeeds": false, "diagnosis": "strip-set-cookie", "step": "token-exchange"},
///         "verify": {"holds": false, "exchange": "bootstrap", "verdict": "modified",
///                    "difference": {"message": "response", "kind": "field-removed", "field": "set-cookie"},
///                    "differences": [{"message": "response", "kind": "cookie-changed", "field": "set-cookie",
///                                     "cookie": "JSESSIONID", "text": "JSESSIONID: Path changed (/suite → /)"}]}
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
    public var loadBalancer: LoadBalancerKind
    /// Absolute path of the configuration template.
    public var configFile: String
    /// Absolute path of the verification policy; nil for `strict`.
    public var policyFile: String?
    /// Whether tap A presents a client certificate issued by the run's CA to the load balancer.
    public var tapAPresentsClientCertificate: Bool
    /// How tap A (in front of the load balancer) and tap B (behind it) run.
    public var tapA = ScenarioTapOptions()
    public var tapB = ScenarioTapOptions()
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
            throw .manifestInvalid(file: manifest, reason: "cannot read: \(error.localizedDescription)")
        }
        var scenario = try ScenarioManifestReader(file: manifest, directory: root).scenario(data)
        guard FileManager.default.fileExists(atPath: scenario.configFile) else {
            throw .configMissing(file: scenario.configFile)
        }
        if let policy = scenario.policyFile {
            do {
                _ = try VerificationPolicy.load(path: policy)
            } catch {
                throw .manifestInvalid(file: manifest, reason: "policy: \(error)")
            }
        }
        scenario.name = root.split(separator: "/").suffix(2).joined(separator: "/")
        return scenario
    }
}

/// Reads the JSON object of `scenario.json`, checking every key, type and name.
private struct ScenarioManifestReader {
    let file: String
    let directory: String

    func fail(_ reason: String) -> ScenarioError { .manifestInvalid(file: file, reason: reason) }

    func scenario(_ data: Data) throws(ScenarioError) -> Scenario {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw fail("not JSON (\(error.localizedDescription))")
        }
        let top = try dictionary(object, at: "the top level",
                                 keys: ["summary", "loadBalancer", "config", "breaks", "policy", "tapA", "tapB", "expect"])
        let summary = try required(string(top["summary"], at: "summary"), at: "summary")
        let kindName = try required(string(top["loadBalancer"], at: "loadBalancer"), at: "loadBalancer")
        guard let kind = LoadBalancerKind(rawValue: kindName) else {
            throw fail("loadBalancer: unknown \"\(kindName)\" (expected "
                       + LoadBalancerKind.allCases.map(\.rawValue).joined(separator: " or ") + ")")
        }
        let config = try string(top["config"], at: "config") ?? kind.defaultConfigFileName
        let policy = try string(top["policy"], at: "policy")
        var presentsCertificate = false
        var tapA = ScenarioTapOptions(), tapB = ScenarioTapOptions()
        if let object = top["tapA"] {
            let options = try dictionary(object, at: "tapA", keys: ["clientCertificate", "plainHTTP", "recordSecrets", "faults"])
            presentsCertificate = try bool(options["clientCertificate"], at: "tapA.clientCertificate") ?? false
            tapA = try tapOptions(options, at: "tapA")
            tapA.plainHTTP = try bool(options["plainHTTP"], at: "tapA.plainHTTP") ?? false
        }
        if let object = top["tapB"] {
            tapB = try tapOptions(dictionary(object, at: "tapB", keys: ["recordSecrets", "faults"]), at: "tapB")
        }
        let expect = try dictionary(required(top["expect"], at: "expect"), at: "expect", keys: ["client", "verify"])
        let expectation = ScenarioExpectation(
            client: try clientOutcome(required(expect["client"], at: "expect.client")),
            verify: try verifyOutcome(required(expect["verify"], at: "expect.verify")))
        return Scenario(name: "", directory: directory, summary: summary, breaks: try string(top["breaks"], at: "breaks"),
                        loadBalancer: kind, configFile: resolve(config), policyFile: policy.map(resolve),
                        tapAPresentsClientCertificate: presentsCertificate, tapA: tapA, tapB: tapB, expectation: expectation)
    }

    /// `recordSecrets` and `faults` (preset names, as `intact proxy --fault` takes them) of one tap.
    private func tapOptions(_ options: [String: Any], at place: String) throws(ScenarioError) -> ScenarioTapOptions {
        var tap = ScenarioTapOptions()
        tap.recordSecrets = try bool(options["recordSecrets"], at: place + ".recordSecrets") ?? false
        tap.faults = try strings(options["faults"], at: place + ".faults") ?? []
        return tap
    }

    private func clientOutcome(_ object: Any) throws(ScenarioError) -> ScenarioExpectation.ClientOutcome {
        let place = "expect.client"
        let client = try dictionary(object, at: place, keys: ["succeeds", "diagnosis", "step"])
        if try required(bool(client["succeeds"], at: place + ".succeeds"), at: place + ".succeeds") {
            guard client["diagnosis"] == nil, client["step"] == nil else {
                throw fail("\(place): a client that succeeds has no diagnosis or step")
            }
            return .succeeds
        }
        let mode = try named(FailureMode.allCases, client["diagnosis"], at: place + ".diagnosis")
        let step = try named(FlowStep.allCases, client["step"], at: place + ".step")
        return .fails(diagnosis: mode, step: step)
    }

    private func verifyOutcome(_ object: Any) throws(ScenarioError) -> ScenarioExpectation.VerifyOutcome {
        let place = "expect.verify"
        let verify = try dictionary(object, at: place, keys: ["holds", "tolerated", "intermediaryRequests", "exchange", "verdict",
                                                               "difference", "differences"])
        if try required(bool(verify["holds"], at: place + ".holds"), at: place + ".holds") {
            guard verify["exchange"] == nil, verify["verdict"] == nil, verify["difference"] == nil,
                  verify["differences"] == nil else {
                throw fail("\(place): a verification that holds has no failing exchange, verdict or difference")
            }
            let tolerated = try strings(verify["tolerated"], at: place + ".tolerated") ?? []
            var minimum = 0
            if let value = verify["intermediaryRequests"] {
                guard let count = value as? Int, count >= 0, !Self.isJSONBoolean(value) else {
                    throw fail("\(place).intermediaryRequests: expected a whole number (the fewest the report must list)")
                }
                minimum = count
            }
            return .holds(tolerated: tolerated.map { $0.lowercased() }, intermediaryRequests: minimum)
        }
        guard verify["tolerated"] == nil else { throw fail("\(place).tolerated: only for a verification that holds") }
        guard verify["intermediaryRequests"] == nil else {
            throw fail("\(place).intermediaryRequests: only for a verification that holds")
        }
        let step = try named(AuthStep.allCases, verify["exchange"], at: place + ".exchange")
        let verdict = try named(HopVerdict.allCases, verify["verdict"], at: place + ".verdict")
        guard !verdict.passes else {
            throw fail("\(place).verdict: \"\(verdict.rawValue)\" passes the policy; expected a failing verdict")
        }
        var differences: [ScenarioExpectation.ExpectedDifference] = []
        if let object = verify["difference"] { differences.append(try expectedDifference(object, at: place + ".difference")) }
        if let object = verify["differences"] {
            guard let list = object as? [Any], !list.isEmpty else { throw fail("\(place).differences: expected a non-empty list") }
            for (index, item) in list.enumerated() {
                differences.append(try expectedDifference(item, at: place + ".differences[\(index)]"))
            }
        }
        return .fails(ScenarioExpectation.ExpectedFailure(step: step, verdict: verdict, differences: differences))
    }

    private func expectedDifference(_ object: Any, at place: String) throws(ScenarioError) -> ScenarioExpectation.ExpectedDifference {
        let fields = try dictionary(object, at: place, keys: ["message", "kind", "field", "cookie", "text"])
        return ScenarioExpectation.ExpectedDifference(
            message: try named(ScenarioExpectation.ExpectedDifference.Message.allCases, fields["message"], at: place + ".message"),
            kind: try named(MessageDifference.Kind.allCases, fields["kind"], at: place + ".kind"),
            field: try string(fields["field"], at: place + ".field")?.lowercased(),
            cookie: try string(fields["cookie"], at: place + ".cookie"),
            text: try string(fields["text"], at: place + ".text"))
    }

    // MARK: Values

    private func resolve(_ relative: String) -> String {
        let url = relative.hasPrefix("/") ? URL(fileURLWithPath: relative)
            : URL(fileURLWithPath: directory).appendingPathComponent(relative)
        return url.standardizedFileURL.path
    }

    private func dictionary(_ object: Any, at place: String, keys: Set<String>) throws(ScenarioError) -> [String: Any] {
        guard let dictionary = object as? [String: Any] else { throw fail("\(place): expected an object") }
        if let unknown = dictionary.keys.sorted().first(where: { !keys.contains($0) }) {
            throw fail("\(place): unknown key \"\(unknown)\" (expected \(keys.sorted().joined(separator: ", ")))")
        }
        return dictionary
    }

    private func required<Value>(_ value: Value?, at place: String) throws(ScenarioError) -> Value {
        guard let value else { throw fail("\(place): missing") }
        return value
    }

    private func string(_ value: Any?, at place: String) throws(ScenarioError) -> String? {
        guard let value else { return nil }
        guard let text = value as? String, !text.isEmpty else { throw fail("\(place): expected a non-empty string") }
        return text
    }

    private func strings(_ value: Any?, at place: String) throws(ScenarioError) -> [String]? {
        guard let value else { return nil }
        guard let list = value as? [String], !list.contains(where: \.isEmpty) else {
            throw fail("\(place): expected a list of non-empty strings")
        }
        return list
    }

    private func bool(_ value: Any?, at place: String) throws(ScenarioError) -> Bool? {
        guard let value else { return nil }
        guard let flag = value as? Bool, Self.isJSONBoolean(value) else {
            throw fail("\(place): expected true or false")
        }
        return flag
    }

    /// True for `true` and `false` as JSONSerialization gives them: a boolean
    /// NSNumber, which also casts to Int (and a number casts to Bool).
    private static func isJSONBoolean(_ value: Any) -> Bool {
        value is Bool && ["__NSCFBoolean", "Bool"].contains("\(type(of: value))")
    }

    /// A required value that must be the raw value of one of `known`.
    private func named<Name: RawRepresentable>(_ known: [Name], _ value: Any?,
                                               at place: String) throws(ScenarioError) -> Name
        where Name.RawValue == String {
        let word = try required(string(value, at: place), at: place)
        guard let name = known.first(where: { $0.rawValue == word }) else {
            throw fail("\(place): unknown \"\(word)\" (expected one of "
                       + known.map(\.rawValue).joined(separator: ", ") + ")")
        }
        return name
    }
}

/// How one tap of a scenario runs, beyond recording.
public struct ScenarioTapOptions: Hashable, Sendable {
    /// Record cookies and other secrets in clear (`--record-secrets`).
    public var recordSecrets = false
    /// Fault presets the tap injects (`--fault NAME[:key=value,...]`, one each).
    public var faults: [String] = []
    /// Tap A only: speak plain HTTP to the load balancer (`reverse:http://…`),
    /// for a load balancer that listens without TLS.
    public var plainHTTP = false

    public init(recordSecrets: Bool = false, faults: [String] = [], plainHTTP: Bool = false) {
        self.recordSecrets = recordSecrets
        self.faults = faults
        self.plainHTTP = plainHTTP
    }

    /// The `intact proxy` options these settings add.
    var proxyArguments: [String] {
        (recordSecrets ? ["--record-secrets"] : []) + faults.flatMap { ["--fault", $0] }
    }
}
