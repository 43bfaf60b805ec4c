import Dispatch
import Foundation
import Glibc

/// Runs a `BrowserSignIn` in a real Chromium: makes the profile, starts the
/// browser, carries DevTools messages between the pipe and the state
/// machine on one serial queue, enforces the time limit, and always ends the
/// same way — the browser's process group killed, the profile removed —
/// whether the callback was caught, the browser crashed, hung or was killed;
/// and if Intact itself is stopped by a signal meanwhile (`ChromiumCleanup`).
///
/// ```swift
/// ChromiumBrowser(settings: settings).signIn(task) { run in … }   // run.failure == nil: run.callbackURL
/// ```
/// One sign-in per object. `completion` runs once, on the browser's queue.
public final class ChromiumBrowser: @unchecked Sendable {
    // @unchecked Sendable: every mutable property is touched only on `queue`.
    public let settings: ChromiumSettings
    private let environment: [String: String]
    private let queue = DispatchQueue(label: "intact.chromium")
    private var session: BrowserSignIn?
    private var process: ChromiumProcess?
    private var profile: ChromiumProfile?
    private var timer: DispatchSourceTimer?
    private var completion: (@Sendable (BrowserRun) -> Void)?
    /// This run's entry in `ChromiumCleanup` (a stop signal ends the browser and removes the profile).
    private var cleanupToken: Int?

    /// `environment`: the caller's, for `PATH` (finding certutil) and passed on to the browser minus `HOME`.
    public init(settings: ChromiumSettings, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.settings = settings
        self.environment = environment
    }

    /// Starts the browser and runs `task`; `completion` gets the run once it
    /// ended, after the browser is gone and its profile removed.
    public func signIn(_ task: BrowserSignIn.Task, completion: @escaping @Sendable (BrowserRun) -> Void) {
        queue.async { [self] in
            precondition(self.completion == nil, "a ChromiumBrowser signs in once")
            self.completion = completion
            var session = BrowserSignIn(task: task)
            let profile: ChromiumProfile
            do {
                profile = try ChromiumProfile.create(trustedCA: settings.trustedCA, clientCertificate: settings.clientCertificate,
                                                     environment: environment)
            } catch {
                var run = session.run
                run.failure = .launch("\(error)")
                return end(run)
            }
            self.profile = profile
            cleanupToken = ChromiumCleanup.shared.register(profile: profile)
            var browserEnvironment = environment
            browserEnvironment["HOME"] = profile.directory
            browserEnvironment["XDG_CONFIG_HOME"] = profile.directory + "/.config"
            browserEnvironment["XDG_CACHE_HOME"] = profile.directory + "/.cache"
            for proxyVariable in ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"] {
                browserEnvironment[proxyVariable] = nil
            }
            let process: ChromiumProcess
            do {
                process = try ChromiumProcess.start(
                    executable: settings.executable,
                    arguments: settings.arguments(profile: profile.userData, runningAsRoot: geteuid() == 0),
                    environment: browserEnvironment, logPath: profile.logPath)
            } catch {
                var run = session.run
                run.failure = .launch("\(error)")
                return end(run)
            }
            self.process = process
            if let cleanupToken { ChromiumCleanup.shared.attach(cleanupToken, group: process.pid) }
            let timer = DispatchSource.makeTimerSource(queue: queue)
            let limit = settings.timeout
            timer.schedule(deadline: .now() + .nanoseconds(Int(limit.components.seconds * 1_000_000_000
                                                               + limit.components.attoseconds / 1_000_000_000)))
            timer.setEventHandler { [self] in
                self.session?.timedOut(seconds: Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18)
                self.check()
            }
            timer.resume()
            self.timer = timer
            process.startReading(on: queue) { [self] output in
                switch output {
                case .message(let message):
                    let commands = self.session?.receive(message) ?? []
                    for command in commands { self.process?.send(command) }
                case .protocolError(let reason):
                    self.session?.protocolFailed(reason)
                case .closed(let termination):
                    let detail = [termination, self.profile?.logTail(lines: 2)].compactMap { $0 }.filter { !$0.isEmpty }
                    self.session?.browserEnded(termination: detail.isEmpty ? nil : detail.joined(separator: "; its last output: "))
                }
                self.check()
            }
            let first = session.start()
            self.session = session
            for command in first { process.send(command) }
        }
    }

    /// `signIn`, waiting for the run. Blocks: never call on the browser's queue or a loop queue.
    public func signInAndWait(_ task: BrowserSignIn.Task) -> BrowserRun {
        let done = DispatchSemaphore(value: 0)
        let box = RunBox()
        signIn(task) { run in
            box.run = run
            done.signal()
        }
        done.wait()
        return box.run ?? BrowserRun()
    }

    /// Ends the run once the state machine finished.
    private func check() {
        guard let session, session.isFinished else { return }
        end(session.run)
    }

    private func end(_ run: BrowserRun) {
        timer?.cancel()
        timer = nil
        session = nil
        process?.kill()
        process = nil
        if let profile {
            if let cleanupToken { ChromiumCleanup.shared.unregister(cleanupToken, removing: profile) } else { profile.remove() }
        }
        profile = nil
        cleanupToken = nil
        let completion = self.completion
        self.completion = nil
        completion?(run)
    }
}

/// Carries the run to the thread waiting in `signInAndWait`.
private final class RunBox: @unchecked Sendable {
    var run: BrowserRun?
}
