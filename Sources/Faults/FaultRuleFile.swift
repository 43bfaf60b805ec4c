import ConfigurationFile
import AuthFlow
/// The rule-file format (`--faults rules.json`) and its reader.
///
/// ```json
/// {"rules": [
///   {"name": "no-cookies-after-sign-in",
///    "match": {"leg": "request", "step": "authenticated-request"},
///    "actions": [{"action": "remove-header", "name": "Cookie"}]}
/// ]}
/// ```
///
/// A rule has `name` (unique, written into every applied fault), `match` and
/// `actions` (applied in order; rules apply in file order).
///
/// `match` fields, all optional except `leg`:
/// - `leg`: `"request"` or `"response"`; left out only in a rule whose actions
///   are all TLS actions (decided when a client connects, so the only other
///   fields allowed are `probability` and `times`).
/// - `step`: a step label or an array of them (`AuthStep`).
/// - `method`: a method or an array of them.
/// - `path`: a glob over the path without query (`*` no `/`, `**` anything, `?` one character);
///   or `pathRegex`: a regex searched in the path with its query.
/// - `present` / `absent`: field names the leg's head must (not) carry.
/// - `status`: a status or an array of them (response leg only).
/// - `probability`: 0…1, drawn from the seeded generator.
/// - `times`: fire at most this many times (counted over the run).
///
/// Actions are objects with `"action"` naming one and its own fields:
/// `remove-header {name}`, `add-header {name, value}`, `set-header {name, value}`,
/// `rename-header {name, to}`, `header-case {name?, style: lower|upper|title}`,
/// `remove-set-cookie {cookie?}`, `rewrite-set-cookie {cookie?, value?, path?,
/// domain?, secure?, httpOnly?, sameSite?, maxAge?, expires?}` (a string sets an
/// attribute, `true` sets a flag, `false`/`null` removes it), `fold-set-cookie {}`,
/// `add-set-cookie {value}`, `remove-cookie {cookie}`, `rewrite-cookie {cookie, value}`,
/// `replace-body {body, contentType?}`, `regex-body {pattern, template}`,
/// `truncate-body {bytes}`, `gzip-body {}`, `rechunk-body {bytes}`,
/// `set-status {status, reason?, location?}`, `answer {status, reason?, headers?:
/// [[name, value], …], body?}`, `regex-target {pattern, template}`,
/// `rewrite-urls {scheme?, host?, pathFrom?, pathTo?, onlyHost?, in?: [target|location|body]}`
/// (without `in`: every place on the rule's leg),
/// `gate {cookie | header, status?: 302|401|403, location?}`, `delay {ms, jitter?}`,
/// `throttle {bytesPerSecond}`, `reset {at: before-headers|after-headers|after-body-bytes,
/// bytes?}`, `close {}`, `stall {}`, `require-client-certificate {caFile?}` (default: the proxy's own CA),
/// `unknown-ca-certificate {}`. Regexes use ICU syntax (NSRegularExpression),
/// templates `$1` for groups. `Examples/faults/README.md` explains each with examples.
public enum FaultRuleFile {
    /// Reads a rule file. `file` only names the file in error messages.
    public static func parse(_ bytes: [UInt8], file: String? = nil) throws(FaultRuleError) -> [FaultRule] {
        try ConfigurationError.inFile(file) { () throws(ConfigurationError) -> [FaultRule] in
            let json = try LocatedJSON.parse(bytes)
            let top = try JSONFieldReader(json, path: "", rule: nil, allowed: ["rules"])
            guard let rulesJSON = top.value("rules") else { throw top.error(.missingField("rules")) }
            guard case .array(let items) = rulesJSON.value else {
                throw top.error(.wrongType(expected: "an array of rules", found: rulesJSON.typeName), "rules")
            }
            var rules: [FaultRule] = []
            for (index, item) in items.enumerated() {
                let rule = try decodeRule(item, index: index)
                if rules.contains(where: { $0.name == rule.name }) {
                    let reader = try JSONFieldReader(item, path: "rules[\(index)]", rule: RuleReference(index: index, name: rule.name), allowed: ruleFields)
                    throw reader.error(.inconsistent("another rule is already called \"\(rule.name)\""), "name")
                }
                rules.append(rule)
            }
            return rules
        }
    }

    private static let ruleFields = ["name", "match", "actions"]
    private static let matchFields = ["leg", "step", "method", "path", "pathRegex", "present", "absent", "status", "probability", "times"]

    private static func decodeRule(_ json: LocatedJSON, index: Int) throws(FaultRuleError) -> FaultRule {
        let path = "rules[\(index)]"
        var reference = RuleReference(index: index, name: nil)
        // The name first, so every later error can name the rule.
        if case .object(let members) = json.value, let nameValue = members.first(where: { $0.key == "name" }),
           case .string(let name) = nameValue.value.value {
            reference.name = name
        }
        let reader = try JSONFieldReader(json, path: path, rule: reference, allowed: ruleFields)
        let name = try reader.required("name", reader.name)
        guard let matchJSON = reader.value("match") else { throw reader.error(.missingField("match")) }
        let match = try decodeMatch(JSONFieldReader(matchJSON, path: reader.path("match"), rule: reference, allowed: matchFields))
        guard let actionsJSON = reader.value("actions") else { throw reader.error(.missingField("actions")) }
        guard case .array(let items) = actionsJSON.value else {
            throw reader.error(.wrongType(expected: "an array of actions", found: actionsJSON.typeName), "actions")
        }
        var actions: [FaultAction] = []
        for (i, item) in items.enumerated() {
            actions.append(try decodeAction(item, path: "\(reader.path("actions"))[\(i)]", rule: reference, leg: match.leg))
        }
        let rule = FaultRule(name: name, match: match, actions: actions)
        if let (actionIndex, message) = rule.problem {
            if let actionIndex {
                throw FaultRuleError(kind: .inconsistent(message), position: items[actionIndex].position,
                                     rule: reference, path: "\(reader.path("actions"))[\(actionIndex)]")
            }
            throw reader.error(.inconsistent(message), actions.isEmpty ? "actions" : "match")
        }
        return rule
    }

    private static func decodeMatch(_ m: JSONFieldReader) throws(FaultRuleError) -> FaultMatch {
        if m.has("path") && m.has("pathRegex") {
            throw m.error(.inconsistent("use either \"path\" (a glob) or \"pathRegex\", not both"), "pathRegex")
        }
        let path: PathPattern?
        if let glob = try m.string("path") {
            path = PathPattern.glob(glob)
        } else {
            path = try m.regex("pathRegex").map(PathPattern.regex)
        }
        return FaultMatch(
            leg: try m.choice("leg", FaultLeg.self),
            steps: try m.choices("step", AuthStep.self).map(Set.init),
            methods: try m.strings("method").map(Set.init),
            path: path,
            present: try m.strings("present") ?? [],
            absent: try m.strings("absent") ?? [],
            statuses: try m.ints("status", in: 100...599).map(Set.init),
            probability: try m.double("probability", in: 0...1) ?? 1,
            times: try m.int("times", in: 1...Int.max))
    }
}
