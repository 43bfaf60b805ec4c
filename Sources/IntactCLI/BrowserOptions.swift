import Browser
import Foundation
import SignIn
import TLS

/// `--browser`, `--chromium`, `--browser-timeout` (client and demo) and the
/// app/browser split (`--app-proxy`, `--browser-proxy`,
/// `--browser-client-cert`, client only).
enum BrowserOptions {
    /// Who plays the browser of steps 6–8.
    enum Kind: String, Sendable, CaseIterable {
        case simulated, chromium
    }

    struct Group: OptionGroup {
        let browser = Option.value("browser", .choice(Kind.allCases, "simulated|chromium"),
                                   help: "who plays the browser of steps 6-8: Intact's own requests, or headless Chromium "
                                       + "driven over DevTools (Debian package chromium)", default: .simulated)
        let chromium = Option.optional("chromium", .string("PATH"),
                                       help: "the Chromium executable for --browser chromium (default: chromium on PATH)")
        let browserTimeout = Option.value("browser-timeout", .duration(), help: "most time Chromium may take for steps 6-8",
                                          default: 30, shownDefault: "30s")
    }

    /// `--app-proxy`, `--browser-proxy`, `--browser-client-cert`.
    struct SplitGroup: OptionGroup {
        let appProxy = Option.optional("app-proxy", .agentPath,
                                       help: "the app's path: http://HOST:PORT or direct (default: --proxy)")
        let browserProxy = Option.optional("browser-proxy", .agentPath,
                                           help: "the browser's own path when it differs from the app's: http://HOST:PORT or direct "
                                               + "(a per-app VPN puts only the app on it)")
        let browserClientCertificate = Option.optional(
            "browser-client-cert", .string("FILE|none"),
            help: "the browser's client certificate: PKCS#12 (with --client-cert-password) or PEM with the certificate "
                + "and its key in one file; or none (default: the simulated browser shares --client-cert; Chromium has none). "
                + "Chromium gets it in its temporary profile, presented unasked to the login URL's origin only")
    }

    /// The identity in `file` for `--browser-client-cert` (PEM or PKCS#12, `IdentityFile`); the error names the file and the problem.
    static func browserIdentity(file: String, password: String) throws -> TLSIdentity {
        do {
            return try IdentityFile.read(file, password: password)
        } catch {
            throw CommandFailure("cannot use browser client certificate \(file): \(error)")
        }
    }

    /// A path as `--app-proxy`/`--browser-proxy` give it.
    enum AgentPath: Hashable, Sendable {
        case direct
        case proxy(ForwardProxy)

        var forwardProxy: ForwardProxy? {
            if case .proxy(let proxy) = self { return proxy }
            return nil
        }
    }

    /// The browser choice the options describe; finds Chromium (the error names the package to install).
    static func choice(_ arguments: ParsedArguments, _ group: Group, environment: [String: String]) throws -> ClientRunner.BrowserChoice {
        guard arguments[group.browser] == .chromium else { return .simulated }
        let executable: String
        do {
            executable = try ChromiumSettings.locate(arguments[group.chromium], environment: environment)
        } catch {
            throw CommandFailure("\(error)")
        }
        let seconds = arguments[group.browserTimeout]
        return .chromium(ChromiumSettings(executable: executable, timeout: .milliseconds(Int64(seconds * 1000))))
    }
}

extension ValueParser where T == BrowserOptions.AgentPath {
    /// `direct` or `http://HOST:PORT`.
    static var agentPath: ValueParser<BrowserOptions.AgentPath> {
        ValueParser(valueName: "URL|direct", expected: "http://HOST:PORT or direct") { text in
            text == "direct" ? .direct : ForwardProxy(text).map { .proxy($0) }
        }
    }
}
