import AuthFlow
import Evidence
import Foundation
import Synchronization

/// Runs scenarios end to end: lays out the run, writes its files, checks the
/// load balancer's configuration, starts the mock server, tap B, the load
/// balancer and tap A (each on its loopback port, which the runner reserved
/// once and hands over as a listening socket; each owned by PID), runs the client through tap A, stops the
/// services in reverse order so their recordings are complete, verifies the
/// four recordings and compares everything with the scenario's expectation.
///
/// `run` blocks the calling thread for the whole run (seconds); never call it
/// on a loop queue. `stopAll` may be called from another thread (a signal
/// handler's queue) to end the children of a run in progress.
public final class ScenarioRunner: Sendable {
    public struct Options: Sendable {
        /// The `intact` executable that runs the server, taps and client.
        public var intactExecutable: String
        /// Where run directories are created, one per scenario run.
        public var runParent: String
        /// Fixed ports; nil picks free ephemeral ones for each run.
        public var ports: ScenarioPorts?
        /// Leave the load balancer stopped, to see what the client and the
        /// report say when it is not running (the expectation then does not apply).
        public var loadBalancerDown: Bool
        /// Seconds the client may take for the whole flow.
        public var clientTimeout: Double
        /// Seconds a service gets to exit after SIGTERM before SIGKILL.
        public var stopGrace: Double
        /// Seconds a service gets to start serving (an intact service to say
        /// so, a product that binds its port to listen) before the run stops.
        public var startTimeout: Int = 30

        public init(intactExecutable: String, runParent: String = NSTemporaryDirectory() + "intact-scenarios",
                    ports: ScenarioPorts? = nil, loadBalancerDown: Bool = false,
                    clientTimeout: Double = 120, stopGrace: Double = 5) {
            self.intactExecutable = intactExecutable
            self.runParent = runParent
            self.ports = ports
            self.loadBalancerDown = loadBalancerDown
            self.clientTimeout = clientTimeout
            self.stopGrace = stopGrace
        }
    }

    public let options: Options
    /// Told each step as it happens (`started nginx (pid 12) on 127.0.0.1:40001`); called on the running thread.
    private let progress: @Sendable (String) -> Void
    /// The children of the run in progress, in start order.
    private let children = Mutex<[ChildProcess]>([])
    private let runDirectory = Mutex<String?>(nil)
    /// Held for the whole of `stopAll`, so that a second caller (the run
    /// ending while a signal handler stops everything) waits until every
    /// child is stopped instead of returning, and exiting, with some still running.
    private let stopping = NSLock()
    /// The signal that interrupted the run (set by `interrupt(signal:)`), nil otherwise.
    private let interruption = Mutex<Int32?>(nil)

    public init(options: Options, progress: @escaping @Sendable (String) -> Void = { _ in }) {
        self.options = options
        self.progress = progress
    }

    /// The run directory of the latest run that got one (kept on disk; a
    /// caller removes it when it is no longer needed).
    public var latestRunDirectory: String? {
        runDirectory.withLock { $0 }
    }

    // MARK: Preparing

    /// Lays out a run of `scenario` for a user to repeat by hand (each
    /// service binds its own port) in a new run directory and writes its
    /// files, then has the load balancer check the rendered configuration.
    /// Throws before anything keeps running: a taken port, a rejected configuration.
    public func prepare(_ scenario: Scenario, runDirectory: String? = nil) throws(ScenarioError) -> ScenarioPlan {
        let ports: ScenarioPorts
        if let fixed = options.ports {
            try fixed.checkFree()
            ports = fixed
        } else {
            ports = try ScenarioPorts.ephemeral()
        }
        return try prepare(scenario, ports: ports, listening: .bindOwnPorts, reserved: nil, runDirectory: runDirectory)
    }

    /// As `prepare`, for the runner: the services inherit the sockets of `reserved`.
    func prepare(_ scenario: Scenario, reserved: ReservedListeners) throws(ScenarioError) -> ScenarioPlan {
        try prepare(scenario, ports: reserved.ports, listening: .inheritReserved, reserved: reserved, runDirectory: nil)
    }

    private func prepare(_ scenario: Scenario, ports: ScenarioPorts, listening: ScenarioPlan.Listening,
                         reserved: ReservedListeners?, runDirectory: String?) throws(ScenarioError) -> ScenarioPlan {
        self.runDirectory.withLock { $0 = nil }
        let executables = try scenario.intermediary.locatePrograms()
        var directory = runDirectory ?? ""
        if runDirectory == nil {
            directory = try ScenarioWorkspace.makeRunDirectory(for: scenario, under: options.runParent)
        }
        self.runDirectory.withLock { $0 = directory }
        progress("run directory \(directory)")
        let plan = try ScenarioPlan(scenario: scenario, ports: ports, runDirectory: directory,
                                    intactExecutable: options.intactExecutable, executables: executables,
                                    listening: listening)
        // Render first: a template error is the scenario's, reported before any file is written.
        _ = try ScenarioWorkspace.renderConfig(plan)
        try ScenarioWorkspace.prepare(plan)
        for command in plan.setup { try runToEnd(command, plan: plan, reserved: nil, role: .setup) }
        try ScenarioWorkspace.handOverWorkDirectory(plan)
        if let check = plan.configCheck { try runToEnd(check, plan: plan, reserved: reserved, role: .configCheck) }
        return plan
    }

    /// Runs a setup command or the configuration check (`nginx -t`,
    /// `haproxy -c`) to its end, with the public process's reserved socket
    /// when it inherits one (HAProxy reads `fd@3` while checking); the
    /// runner keeps its own copy. A failure is `.configRejected` naming the
    /// product, the template and the command, with the end of its output.
    private func runToEnd(_ command: ProcessCommand, plan: ScenarioPlan, reserved: ReservedListeners?,
                          role: ProcessCommand.Role) throws(ScenarioError) {
        let log = plan.files.log(role, in: plan.runDirectory)
        let listener = command.inheritsListener ? reserved?.descriptor(.loadBalancer) : nil
        var command = command
        if listener == nil { command.inheritsListener = false }
        let child = try ChildProcess.spawn(command, outputFile: log, errorFile: log, listener: listener)
        let ended = child.wait(timeout: 30) ?? child.stop(grace: 0)
        guard ended == .exited(0) else {
            let what = role == .setup ? "its setup command failed (\(ended))" : "rejected the configuration (\(ended))"
            throw .configRejected(tool: plan.scenario.intermediary.displayName, file: plan.scenario.configFile,
                                  output: "\(what): \(command)\n" + Self.tail(of: log, lines: 30))
        }
    }

    // MARK: Running

    /// Reserves the run's listening sockets, prepares and runs `scenario`,
    /// and compares the outcome with its expectation.
    public func run(_ scenario: Scenario) throws(ScenarioError) -> ScenarioResult {
        let reserved = try ReservedListeners(fixed: options.ports)
        let plan = try prepare(scenario, reserved: reserved)
        defer { stopAll() }
        for service in plan.services {
            if Self.intermediaryRoles.contains(service.role) && options.loadBalancerDown {
                // Nothing serves the port, so it must refuse connections rather than queue them.
                reserved.handedOver(service.role)
                progress("left \(service.displayName) stopped (--load-balancer-down)")
                continue
            }
            try start(service, plan: plan, reserved: reserved)
            // What starts next may use it at once (HAProxy health-checks tap B as it starts).
            try waitUntilServing(service, plan: plan, seconds: options.startTimeout)
        }
        // The inner port of a kind without an inner process: nothing of the run listens there.
        reserved.handedOver(.innerIntermediary)
        try checkServicesRun(plan)
        var clients = [try runClient(plan.client, output: plan.files.clientOutput, plan: plan)]
        for (command, output) in zip(plan.laterClients, plan.files.laterClientOutputs) {
            try checkServicesRun(plan)
            clients.append(try runClient(command, output: output, plan: plan))
        }
        let client = clients.removeLast()
        try checkServicesRun(plan)
        stopAll()
        let report = try verify(plan)
        let tls = (try? RecordingReader.read(path: plan.files.recordings["tap-a"] ?? "")).flatMap {
            IntermediaryTLS.observe(plan: plan, tapA: $0)
        }
        var mismatches = options.loadBalancerDown ? nil
            : scenario.expectation.mismatches(client: client, earlier: clients, report: report)
        if let expected = scenario.expectation.tls, !options.loadBalancerDown {
            mismatches?.append(contentsOf: ScenarioExpectation.tlsMismatches(expected: expected, observed: tls))
        }
        return ScenarioResult(plan: plan, client: client, earlierClients: clients, report: report, mismatches: mismatches,
                              intermediaryTLS: tls)
    }

    /// Called from a signal handler: records `signal`, then stops every
    /// child. A run returning meanwhile (its own `stopAll` waits for this
    /// one) sees `interruptedBy` set and must not go on.
    public func interrupt(signal: Int32) {
        interruption.withLock { $0 = signal }
        stopAll()
    }

    /// The signal that interrupted the run, nil when none did.
    public var interruptedBy: Int32? { interruption.withLock { $0 } }

    /// Stops every child still running, newest first (tap A before the load
    /// balancer before tap B before the server), each with SIGTERM then,
    /// after the grace period, SIGKILL.
    public func stopAll() {
        stopping.lock()
        defer { stopping.unlock() }
        let running = children.withLock { list in
            defer { list.removeAll() }
            return list
        }
        for child in running.reversed() where child.termination == nil {
            let ended = child.stop(grace: options.stopGrace)
            progress("stopped \(child.command.role.displayName) (pid \(child.pid)): \(ended)")
        }
    }

    /// Starts a long-running service with the socket `reserved` holds for
    /// its role, and closes the runner's copy only once the child holds its
    /// own: the port listens without a gap from the reservation on, and
    /// connections wait in the backlog until the child accepts them.
    ///
    /// A product that binds its port itself (`IntermediaryKind.Listening.bindsItsPort`)
    /// gets no socket: the runner closes its reservation just before the
    /// start, and `waitUntilServing` waits for the port to listen.
    func start(_ command: ProcessCommand, plan: ScenarioPlan, reserved: ReservedListeners) throws(ScenarioError) {
        guard let port = plan.port(of: command.role) else {
            preconditionFailure("\(command.role) is not a listening role")
        }
        let log = plan.files.log(command.role, in: plan.runDirectory)
        let child: ChildProcess
        if command.inheritsListener {
            guard let socket = reserved.descriptor(command.role) else {
                preconditionFailure("\(command.role) has no reserved socket")
            }
            child = try ChildProcess.spawn(command, outputFile: log, errorFile: log, listener: socket)
            reserved.handedOver(command.role)
        } else {
            reserved.handedOver(command.role)
            child = try ChildProcess.spawn(command, outputFile: log, errorFile: log)
        }
        children.withLock { $0.append(child) }
        progress("started \(command.displayName) (pid \(child.pid)) on \(ScenarioPlan.loopbackHost):\(port)")
    }

    /// The roles of the intermediary's processes.
    static let intermediaryRoles: Set<ProcessCommand.Role> = [.loadBalancer, .innerIntermediary]

    /// Waits until `command`, just started, serves. An `intact` service
    /// (server or tap) must have said "listening on" in its log: it then has
    /// its recording open and its signal handlers installed. A product that
    /// binds its port itself must have the port listening. Called as each
    /// service starts, so the next one starts only once it serves: without
    /// this wait a load balancer's health checks could time out in tap B's
    /// backlog and mark the server down (HAProxy answering 503), a fast run
    /// could stop a tap before it wrote its recording, or tap A could find
    /// the product's port closed. Returns at once for a product that
    /// inherited its socket (it accepts from the reservation on). Throws
    /// `.exitedBeforeReady` for a service that ends first and `.notServing`
    /// for one that never serves.
    private func waitUntilServing(_ command: ProcessCommand, plan: ScenarioPlan, seconds: Int) throws(ScenarioError) {
        let intactRoles: Set<ProcessCommand.Role> = [.server, .tapB, .tapA]
        let role = command.role
        let isIntact = intactRoles.contains(role)
        guard isIntact || !command.inheritsListener, let port = plan.port(of: role),
              let child = children.withLock({ $0 }).last(where: { $0.command.role == role }) else { return }
        let deadline = Date().addingTimeInterval(Double(seconds))
        let log = plan.files.log(role, in: plan.runDirectory)
        func serves() -> Bool {
            isIntact ? (try? String(contentsOfFile: log, encoding: .utf8))?.contains("listening on") ?? false
                : LoopbackSocket.isListening(port: port)
        }
        while !serves() {
            if let ended = child.termination {
                throw .exitedBeforeReady(role: name(of: command, plan: plan), address: "\(ScenarioPlan.loopbackHost):\(port)",
                                         termination: ended, logTail: logTail(of: command, plan: plan))
            }
            if Date() > deadline {
                throw .notServing(role: name(of: command, plan: plan)
                                    + (isIntact ? "" : " (nothing listens on \(ScenarioPlan.loopbackHost):\(port))"),
                                  seconds: seconds, logTail: logTail(of: command, plan: plan))
            }
            usleep(20_000)
        }
    }

    /// Throws `.exitedBeforeReady` for a service that ended on its own, and
    /// `.droppedListener` for one that runs but closed the socket it was
    /// handed (an nginx whose `listen` names another address), each with the
    /// tail of its log. Services hold their sockets from the start, so a
    /// failing one shows here rather than as a port that never opens.
    private func checkServicesRun(_ plan: ScenarioPlan) throws(ScenarioError) {
        let running = children.withLock { $0 }
        for child in running where child.command.role != .client {
            let role = child.command.role
            guard let port = plan.port(of: role) else { continue }
            let address = "\(ScenarioPlan.loopbackHost):\(port)"
            if let ended = child.termination {
                throw .exitedBeforeReady(role: name(of: child.command, plan: plan), address: address, termination: ended,
                                         logTail: logTail(of: child.command, plan: plan))
            }
            if !LoopbackSocket.isListening(port: port) {
                throw .droppedListener(role: name(of: child.command, plan: plan), address: address,
                                       logTail: logTail(of: child.command, plan: plan))
            }
        }
    }

    /// How messages name a process: an intermediary's by its product and
    /// the configuration it runs (`Apache httpd (configuration …/apache2.conf)`).
    private func name(of command: ProcessCommand, plan: ScenarioPlan) -> String {
        guard Self.intermediaryRoles.contains(command.role) else { return command.displayName }
        return "\(command.displayName) (configuration \(plan.scenario.configFile))"
    }

    /// The last lines of what the process wrote, and for the intermediary
    /// the last lines of each log file its kind names (`nginx-error.log`, Traffic Server's `diags.log`).
    private func logTail(of command: ProcessCommand, plan: ScenarioPlan) -> String {
        let own = Self.tail(of: plan.files.log(command.role, in: plan.runDirectory), lines: 20)
        guard Self.intermediaryRoles.contains(command.role) else { return own }
        let kind = plan.scenario.intermediary
        let others = kind.logFiles.compactMap { template -> String? in
            guard let path = try? ConfigTemplate(file: "", text: template).render(plan.placeholderValues) else { return nil }
            let tail = Self.tail(of: path, lines: 10)
            return tail.isEmpty ? nil : "\(path):\n" + tail
        }
        return ([own].filter { !$0.isEmpty } + others).joined(separator: "\n")
    }

    /// Runs one run of the client to its end and reads its JSON outcome from `output`.
    private func runClient(_ command: ProcessCommand, output: String, plan: ScenarioPlan) throws(ScenarioError) -> ClientObservation {
        let log = plan.files.log(.client, in: plan.runDirectory)
        let child = try ChildProcess.spawn(command, outputFile: output, errorFile: log)
        children.withLock { $0.append(child) }
        guard let ended = child.wait(timeout: options.clientTimeout) else {
            child.stop(grace: 0)
            throw .timedOut(role: "the client", seconds: Int(options.clientTimeout), logTail: Self.tail(of: log, lines: 20))
        }
        progress("the client (pid \(child.pid)) \(ended)")
        let data = FileManager.default.contents(atPath: output) ?? Data()
        guard !data.isEmpty else { return ClientObservation(termination: ended, outcome: nil) }
        do {
            return ClientObservation(termination: ended, outcome: try JSONDecoder().decode(FlowOutcome.self, from: data))
        } catch {
            throw .unreadableOutput(role: "the client", file: output,
                                    reason: "not the JSON outcome of intact client --json (\(error))")
        }
    }

    /// Reads the four recordings, verifies them in path order under the
    /// scenario's policy, and writes the report as text, JSON and HTML.
    private func verify(_ plan: ScenarioPlan) throws(ScenarioError) -> VerificationReport {
        do {
            let recordings = try plan.pathTaps.map { tap in
                try RecordingReader.read(path: plan.files.recordings[tap] ?? "")
            }
            let policy = try plan.scenario.policyFile.map(VerificationPolicy.load(path:)) ?? .strict
            let report = try Verifier(Verifier.Configuration(policy: policy, path: plan.pathTaps)).verify(recordings)
            let causes = IntermediaryDirective.section(for: report, product: plan.scenario.intermediary.name)
            try Data((TextReport.render(report) + (causes.map { "\n" + $0 } ?? "")).utf8)
                .write(to: URL(fileURLWithPath: plan.files.reportText))
            try Data(report.jsonBytes()).write(to: URL(fileURLWithPath: plan.files.reportJSON))
            try Data(HTMLReport.render(report).utf8).write(to: URL(fileURLWithPath: plan.files.reportHTML))
            progress("verified the recordings: policy \(report.policy.name) \(report.policyHolds ? "holds" : "fails")")
            return report
        } catch {
            throw .unreadableOutput(role: "the taps", file: plan.runDirectory, reason: "\(error)")
        }
    }

    /// The last `lines` lines of a log file, or "" when it is empty or unreadable.
    static func tail(of path: String, lines: Int) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { return "" }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }
}

/// What one run of a scenario produced.
public struct ScenarioResult: Sendable {
    public var plan: ScenarioPlan
    /// The client's run, the last when it ran several times (`client.runs`).
    public var client: ClientObservation
    /// The runs before the last, in order; empty for one run.
    public var earlierClients: [ClientObservation]
    public var report: VerificationReport
    /// How the run differs from the scenario's expectation (empty: as
    /// expected); nil when the run deliberately departed from the scenario
    /// (`loadBalancerDown`).
    public var mismatches: [String]?
    /// How TLS crossed a forward intermediary; nil for a reverse one.
    public var intermediaryTLS: IntermediaryTLS?

    public init(plan: ScenarioPlan, client: ClientObservation, earlierClients: [ClientObservation] = [],
                report: VerificationReport, mismatches: [String]?, intermediaryTLS: IntermediaryTLS? = nil) {
        self.plan = plan
        self.client = client
        self.earlierClients = earlierClients
        self.report = report
        self.mismatches = mismatches
        self.intermediaryTLS = intermediaryTLS
    }

    /// The `tls:` line of the summary, for a forward intermediary.
    var tlsLine: String? { intermediaryTLS?.description }

    /// True when the run produced exactly what the scenario expects.
    public var isAsExpected: Bool { mismatches?.isEmpty == true }
}
