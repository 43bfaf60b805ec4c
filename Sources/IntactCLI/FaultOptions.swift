import Faults
import Foundation
import Proxy
import ProxyAddons

/// The fault options `intact proxy` and `intact demo` share — `--fault`
/// (presets, repeatable), `--faults` (a rule file) and `--seed` — and the
/// engine they make.
struct FaultOptions {
    /// `--fault`, `--faults` and `--seed`, for a command's `OptionGroup`.
    struct Group: OptionGroup {
        let fault = Option.repeatable(
            "fault", .string("NAME[:key=value,...]"),
            help: "inject a fault preset ('intact faults' lists them, 'intact faults NAME' its parameters)")
        let faults = Option.optional("faults", .string("FILE.json"), help: "inject the faults of a rule file (format below)")
        let seed = Option.optional("seed", .unsigned(),
                                   help: "seed of the probability and jitter draws (default: a random one, printed)")
    }

    /// The `--help` paragraph on the options and the rule file format.
    static let discussion = """
        Faults: --fault NAME[:key=value,...] applies a preset (auth-redirect, html-401,
        foreign-response, gateway-cookie, strip-set-cookie, rewrite-set-cookie, strip-cookie,
        rewrite-urls, drop-challenge, alter-token-post, compress, client-cert-required,
        reset-token-post, latency; 'intact faults' says what each breaks). --faults FILE.json
        adds rules of your own:
          {"rules": [{"name": "strip-session",
                      "match": {"leg": "response", "step": "bootstrap"},
                      "actions": [{"action": "remove-set-cookie", "cookie": "JSESSIONID"}]}]}
        match: leg (request|response), step, method, path (glob) or pathRegex, present,
        absent, status, probability (0-1, drawn with --seed), times. Actions: header,
        cookie, body, status, answer, URL, gate, network (delay, throttle, reset, close,
        stall) and TLS (require-client-certificate, unknown-ca-certificate); every action
        and field is in Examples/faults/README.md. An unknown field is an error naming its
        line, column and the fields allowed. Every fault applied is written into the
        record of its exchange.
        """

    /// The rules and their seed.
    let engine: FaultEngine
    /// Where the rules came from, for messages: `--fault NAME` and `--faults FILE`, in order.
    let sources: [String]
    /// The preset names given with `--fault`.
    let presets: [String]

    /// The faults the options ask for, or nil when there are none. Bad
    /// option values are usage errors; a rule file that cannot be read or
    /// does not parse fails the command with the file's line and field.
    static func parse(_ arguments: ParsedArguments, _ options: Group) throws -> FaultOptions? {
        var rules: [FaultRule] = []
        var sources: [String] = []
        var presets: [String] = []
        for specification in arguments[options.fault] {
            do {
                rules += try FaultPreset.rules(specification: specification)
            } catch {
                throw UsageError("option --fault: \(error)", path: arguments.path)
            }
            sources.append("--fault \(specification)")
            presets.append(String(specification.prefix { $0 != ":" }))
        }
        if let file = arguments[options.faults] {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw CommandFailure("cannot read the rule file \(file)")
            }
            do {
                rules += try FaultRuleFile.parse(Array(data), file: file)
            } catch {
                throw CommandFailure("\(error)")
            }
            sources.append("--faults \(file)")
        }
        var seen: Set<String> = []
        if let twice = rules.first(where: { !seen.insert($0.name).inserted }) {
            throw UsageError("the fault rule \"\(twice.name)\" is given twice (rule names must be unique across --fault and --faults)",
                             path: arguments.path)
        }
        let seed = arguments[options.seed] ?? UInt64.random(in: 0...UInt64(UInt32.max))
        guard !rules.isEmpty else {
            if arguments.isGiven(options.seed) { throw UsageError("--seed needs --fault or --faults", path: arguments.path) }
            return nil
        }
        return FaultOptions(engine: FaultEngine(rules: rules, seed: seed), sources: sources, presets: presets)
    }

    /// The add-on that applies the rules in the proxy (reads the CA files client-certificate rules name).
    func addon(contextPath: String) throws -> FaultsAddon {
        do {
            return try FaultsAddon(engine: engine, contextPath: contextPath)
        } catch {
            throw CommandFailure("\(error)")
        }
    }

    /// `--fault latency, --faults rules.json (5 rules); seed 42 (--seed 42 draws the same again)`.
    var summary: String {
        let count = engine.rules.count
        return sources.joined(separator: ", ") + " (\(count) rule\(count == 1 ? "" : "s")); seed \(engine.seed) "
            + "(--seed \(engine.seed) draws the same again)"
    }
}
