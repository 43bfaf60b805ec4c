import Dispatch
import Foundation
import Glibc
import Scenarios

/// `intact scenario`: run real load balancers (nginx, HAProxy) between two
/// taps and check that Intact catches what each configuration does.
///
/// Blocks the main thread for the whole run; processes are children owned by PID.
enum ScenarioCommand {
    static let command = Command(
        name: "scenario",
        summary: "Run intermediary scenarios: client → tap A → a real load balancer or proxy → tap B → mock server.",
        discussion: """
            A scenario is a directory with scenario.json (what it shows and the outcome it must
            give) and the intermediary's configuration template whose {{PLACEHOLDERS}} the runner
            fills with loopback ports and run files. Kinds: \(IntermediaryKind.names.joined(separator: ", "))
            (squid and tinyproxy are forward proxies: tap A runs as the client's proxy and tunnels
            through them). See Docs/load-balancers.md and Docs/scenario-format.md.
            """,
        subcommands: [runCommand, prepareCommand, listCommand])

    static let basePort = Option.optional(
        "base-port", .integer(in: 1024...65531, "PORT"),
        help: "use PORT (tap A), PORT+1 (intermediary), PORT+2 (tap B), PORT+3 (server), PORT+4 (the intermediary's "
            + "inner port) instead of free ephemeral ports")

    /// The options of `intact scenario run`, in `--help` order.
    struct RunOptions: OptionGroup {
        let basePort = ScenarioCommand.basePort
        let runDirectory = Option.value("run-dir", .string("DIR"), help: "create run directories under DIR",
                                        default: NSTemporaryDirectory() + "intact-scenarios")
        let keep = Option.flag("keep", help: "keep every run directory (recordings, logs, reports)")
        let report = Option.flag("report", help: "print the full verification report of each run")
        let verbose = Option.flag("verbose", short: "v", help: "print each process as it starts and stops")
        let loadBalancerDown = Option.flag("load-balancer-down",
                                           help: "leave the load balancer stopped, to see what the client and the report say")
        let intact = Option.optional("intact", .string("PATH"),
                                     help: "the intact executable to run the server, taps and client (default: this one)")
    }

    /// The options of `intact scenario prepare`, in `--help` order.
    struct PrepareOptions: OptionGroup {
        let basePort = ScenarioCommand.basePort
        let runDirectory = Option.required("run-dir", .string("DIR"),
                                           help: "directory to write the run's files into (created)")
        let intact = Option.optional("intact", .string("PATH"),
                                     help: "the intact executable the printed commands use (default: this one)")
    }

    static let runOptions = RunOptions()
    static let prepareOptions = PrepareOptions()

    static let runCommand = Command(
        name: "run",
        summary: "Run scenarios and compare each outcome with what the scenario expects.",
        discussion: """
            For each scenario: renders and checks the configuration (nginx -t, haproxy -c), starts
            the mock server, tap B (reverse proxy in front of it), the load balancer and tap A
            (reverse proxy in front of it) on 127.0.0.1, runs the client through tap A, stops
            everything, verifies the four recordings and prints the verdict. DIR is a scenario or
            a directory searched for scenarios. Exit status 0 when every scenario gave its
            expected outcome (a broken configuration that is caught counts as expected).
            Run directories of unexpected outcomes are kept for inspection.
            """,
        arguments: [CommandArgument("DIR", help: "scenario directory, or a directory of scenarios", arity: .zeroOrMore)],
        options: runOptions,
        run: run)

    static let prepareCommand = Command(
        name: "prepare",
        summary: "Write one scenario's certificates and configuration, and print the commands to run it by hand.",
        arguments: [CommandArgument("DIR", help: "scenario directory")],
        options: prepareOptions,
        run: prepare)

    static let listCommand = Command(
        name: "list",
        summary: "List scenarios with what each breaks and the outcome it expects.",
        arguments: [CommandArgument("DIR", help: "scenario directory, or a directory of scenarios", arity: .zeroOrMore)],
        run: list)

    // MARK: Running

    private static func run(_ arguments: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let scenarios = try ScenarioCatalog.load(directories(arguments))
        let given = runOptions
        var options = ScenarioRunner.Options(intactExecutable: try intactExecutable(arguments[given.intact]))
        options.ports = arguments[given.basePort].map(ScenarioPorts.init(base:))
        options.loadBalancerDown = arguments[given.loadBalancerDown]
        options.runParent = arguments[given.runDirectory]
        let output = context.standardOutput
        let verbose = arguments[given.verbose]
        let runner = ScenarioRunner(options: options) { line in
            if verbose { output.line("  · " + line) }
        }
        let stopper = SignalStopper(runner: runner)
        defer { stopper.cancel() }

        var unexpected: [String] = []
        for scenario in scenarios {
            defer { if let signal = runner.interruptedBy { exit(128 + signal) } }
            do {
                let result = try runner.run(scenario)
                if let signal = runner.interruptedBy { exit(128 + signal) }
                output.write(result.summary)
                if arguments[given.report] {
                    output.write((try? String(contentsOfFile: result.plan.files.reportText, encoding: .utf8)) ?? "")
                }
                if result.isAsExpected && !arguments[given.keep] {
                    try? FileManager.default.removeItem(atPath: result.plan.runDirectory)
                } else {
                    output.line("  kept:     \(result.plan.runDirectory) (report.txt, report.html, recordings, logs)")
                }
                if result.mismatches?.isEmpty == false { unexpected.append(scenario.name) }
            } catch {
                output.line("Scenario \(scenario.name): \(scenario.summary)")
                context.standardError.line("intact: scenario \(scenario.name): \(error)")
                if let kept = runner.latestRunDirectory, FileManager.default.fileExists(atPath: kept) {
                    output.line("  kept:     \(kept)")
                }
                unexpected.append(scenario.name)
            }
            output.line()
        }
        let count = scenarios.count == 1 ? "1 scenario" : "\(scenarios.count) scenarios"
        if unexpected.isEmpty {
            output.line("\(count): every outcome as expected.")
            return ExitStatus.success
        }
        output.line("\(count): \(unexpected.count) not as expected: \(unexpected.joined(separator: ", "))")
        return ExitStatus.failure
    }

    private static func prepare(_ arguments: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let directory = arguments.requiredArgument("DIR")
        let runDirectory = arguments[prepareOptions.runDirectory]
        let scenario = try Scenario.load(from: directory)
        var options = ScenarioRunner.Options(intactExecutable: try intactExecutable(arguments[prepareOptions.intact]))
        options.ports = arguments[prepareOptions.basePort].map(ScenarioPorts.init(base:))
        let absolute = URL(fileURLWithPath: runDirectory).standardizedFileURL.path
        do {
            try FileManager.default.createDirectory(atPath: absolute, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw CommandFailure("cannot create \(absolute): \(error.localizedDescription)")
        }
        let plan = try ScenarioRunner(options: options).prepare(scenario, runDirectory: absolute)
        let output = context.standardOutput
        output.line("Prepared \(scenario.name) in \(plan.runDirectory); \(scenario.intermediary.displayName) accepts the configuration.")
        output.line("Run each of these in its own terminal, in this order (each keeps running):")
        if !plan.setup.isEmpty {
            output.line("(The setup of \(scenario.intermediary.displayName) ran already: "
                        + plan.setup.map(\.description).joined(separator: "; ") + ")")
        }
        for (index, service) in plan.services.enumerated() {
            output.line("  \(index + 1). \(service.displayName), listening on 127.0.0.1:\(plan.port(of: service.role) ?? 0):")
            output.line("     \(service)")
        }
        let clients = ([plan.client] + plan.laterClients).map { command in
            var command = command
            command.arguments.removeAll { $0 == "--json" }
            return command
        }
        var step = plan.services.count + 1
        output.line("Then sign in through tap A\(clients.count > 1 ? ", once per app, one after the other" : ""), "
                    + "and verify the \(plan.pathTaps.count) recordings:")
        for client in clients {
            output.line("  \(step). \(client)")
            step += 1
        }
        output.line("  \(step). stop tap A, \(scenario.intermediary.displayName), tap B and the server (Ctrl-C), then:")
        output.line("     \(plan.verify)")
        output.line("Expected: " + expectationText(scenario))
        return ExitStatus.success
    }

    private static func list(_ arguments: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let scenarios = try ScenarioCatalog.load(directories(arguments))
        for scenario in scenarios {
            context.standardOutput.line("\(scenario.name): \(scenario.summary)")
            if let breaks = scenario.breaks { context.standardOutput.line("    breaks:   \(breaks)") }
            context.standardOutput.line("    expects:  " + expectationText(scenario))
        }
        return ExitStatus.success
    }

    // MARK: Helpers

    /// `client succeeds; policy holds` / `client fails with strip-set-cookie at token-exchange; …`.
    static func expectationText(_ scenario: Scenario) -> String {
        let expectation = scenario.expectation
        var parts: [String] = []
        let earlier = scenario.clientRuns - 1
        let who = earlier > 0 ? "the client signs in " + (earlier == 1 ? "once" : "\(earlier) times") + ", then " : ""
        switch expectation.client {
        case .succeeds: parts.append(who.isEmpty ? "the client signs in" : who + "signs in again")
        case let .fails(mode, step):
            parts.append((who.isEmpty ? "the client " : who) + "fails with \(mode.rawValue) at \(step.rawValue)")
        }
        switch expectation.verify {
        case let .holds(tolerated, intermediaryRequests):
            parts.append("the policy holds" + (tolerated.isEmpty ? "" : ", tolerating " + tolerated.joined(separator: ", "))
                         + (intermediaryRequests == 0 ? "" : ", with at least \(intermediaryRequests) intermediary "
                            + "request\(intermediaryRequests == 1 ? "" : "s") listed"))
        case let .fails(failure):
            parts.append("verify finds \(failure.step.rawValue) \(failure.verdict.rawValue) on tap-a → tap-b"
                         + (failure.cachedCopy ? ", a cached copy of another exchange's answer" : "")
                         + (failure.failure.map { ", with a failure saying \"\($0)\"" } ?? "")
                         + (failure.differences.isEmpty ? "" : " (" + failure.differences.map(\.description).joined(separator: "; ") + ")"))
        }
        return parts.joined(separator: "; ")
    }

    private static func directories(_ arguments: ParsedArguments) throws -> [String] {
        let given = arguments.arguments("DIR")
        guard !given.isEmpty else {
            throw UsageError("give a scenario directory, or a directory of scenarios such as Examples/loadbalancers",
                             path: arguments.path)
        }
        return given
    }

    /// `--intact`, else the executable of this process.
    private static func intactExecutable(_ given: String?) throws -> String {
        if let path = given {
            return URL(fileURLWithPath: path).standardizedFileURL.path
        }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { throw CommandFailure("cannot find the intact executable; give --intact PATH") }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Stops the runner's children when `intact scenario run` gets SIGINT or
/// SIGTERM, then exits with 128 + the signal, so an interrupted run leaves
/// no process behind. Created and cancelled on the main thread; the signal
/// handlers run on a global queue and touch only the runner (thread-safe).
private final class SignalStopper {
    private let sources: [DispatchSourceSignal]

    init(runner: ScenarioRunner) {
        sources = [SIGINT, SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                runner.interrupt(signal: number)
                exit(128 + number)
            }
            source.resume()
            return source
        }
    }

    /// Restores the default dispositions.
    func cancel() {
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
        signal(SIGHUP, SIG_DFL)
    }
}
