import Foundation

/// How Intact starts Chromium for steps 6–8.
public struct ChromiumSettings: Hashable, Sendable {
    /// Where the browser's connections go.
    public enum Path: Hashable, Sendable, CustomStringConvertible {
        /// Straight to the server.
        case direct
        /// Through a forward proxy (`http://HOST:PORT`), loopback included.
        case forwardProxy(host: String, port: Int)

        public var description: String {
            switch self {
            case .direct: return "direct"
            case .forwardProxy(let host, let port): return "http://\(host.contains(":") ? "[\(host)]" : host):\(port)"
            }
        }
    }

    /// The executable (`/usr/bin/chromium`).
    public var executable: String
    public var path: Path
    /// PEM file of the CA the browser trusts, put in the profile's NSS database.
    public var trustedCA: String?
    /// Turns HTTP/2 off (`--disable-http2`): the browser speaks HTTP/1.1 only.
    public var http1Only: Bool
    /// The most steps 6–8 may take in the browser, from start to callback.
    public var timeout: Duration
    /// Names the browser resolves to given addresses (`MAP HOST:PORT ADDRESS`,
    /// Chromium's `--host-resolver-rules` syntax), ahead of the rule that
    /// makes every other name but loopback unresolvable.
    public var hostMappings: [String] = []
    /// The client certificate the browser presents, unasked, to the origins it names.
    public var clientCertificate: ChromiumClientCertificate?

    public init(executable: String, path: Path = .direct, trustedCA: String? = nil,
                http1Only: Bool = false, timeout: Duration = .seconds(30)) {
        self.executable = executable
        self.path = path
        self.trustedCA = trustedCA
        self.http1Only = http1Only
        self.timeout = timeout
    }

    /// The Debian package that provides Chromium.
    public static let package = "chromium"

    /// `name` when it is a path to an executable, else the first of
    /// `chromium`, `chromium-browser` on `PATH`; the error names the package.
    public static func locate(_ name: String? = nil, environment: [String: String]) throws(BrowserLaunchError) -> String {
        if let name, name.contains("/") {
            guard FileManager.default.isExecutableFile(atPath: name) else {
                throw .notInstalled("\(name) is not an executable file")
            }
            return name
        }
        let candidates = name.map { [$0] } ?? ["chromium", "chromium-browser"]
        if let found = findOnPath(candidates, environment: environment) { return found }
        throw .notInstalled("--browser chromium needs Chromium, and \(candidates.joined(separator: " or ")) is not on PATH: "
                            + "install the Debian package \(package) (apt-get install \(package))")
    }

    /// The first of `names` found as an executable in `PATH`'s directories.
    static func findOnPath(_ names: [String], environment: [String: String]) -> String? {
        let directories = (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").map(String.init)
        for name in names {
            for directory in directories where !directory.isEmpty {
                let candidate = directory + "/" + name
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            }
        }
        return nil
    }

    /// Hosts of Chromium's own services (updates, sign-in, time, safe
    /// browsing): sent around the forward proxy, where the profile's
    /// resolver rules make them fail at once, so they never reach the path
    /// under test. Measured: with `--disable-background-networking` and
    /// `--disable-component-update` alone, update.googleapis.com,
    /// accounts.google.com, clients2.google.com and redirector.gvt1.com
    /// still reached the proxy.
    static let ownServiceHosts = ["*.google.com", "*.googleapis.com", "*.gvt1.com", "*.gstatic.com",
                                  "*.googleusercontent.com", "*.google", "*.chromium.org"]

    /// The command line: headless, the DevTools pipe, a fresh profile in
    /// `profile`, no background traffic, the path, and `--no-sandbox` when
    /// running as root (Chromium refuses to start otherwise).
    public func arguments(profile: String, runningAsRoot: Bool) -> [String] {
        var arguments = [
            "--headless", "--remote-debugging-pipe", "--user-data-dir=\(profile)",
            "--no-first-run", "--no-default-browser-check", "--disable-gpu",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-default-apps", "--disable-extensions", "--disable-domain-reliability", "--no-pings",
            "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,Translate",
            "--password-store=basic", "--use-mock-keychain",
            // Names other than IP literals (and the mapped ones) resolve to nothing: no lookups leave the machine.
            "--host-resolver-rules=" + (hostMappings + ["MAP * ~NOTFOUND", "EXCLUDE 127.0.0.1", "EXCLUDE localhost"])
                .joined(separator: ", "),
        ]
        if runningAsRoot { arguments.append("--no-sandbox") }
        if http1Only { arguments.append("--disable-http2") }
        switch path {
        case .direct:
            arguments.append("--no-proxy-server")
        case .forwardProxy:
            // Chromium never proxies loopback unless the bypass list removes that rule (`<-loopback>`).
            arguments.append("--proxy-server=\(path)")
            arguments.append("--proxy-bypass-list=" + (["<-loopback>"] + ChromiumSettings.ownServiceHosts).joined(separator: ";"))
        }
        arguments.append("about:blank")
        return arguments
    }
}

/// A client certificate for Chromium: imported into the run's profile (its
/// NSS database, with `pk12util`) and picked without asking for `origins`
/// through the profile's `auto_select_certificate` content setting — the
/// per-profile form of the `AutoSelectCertificateForUrls` policy, so nothing
/// outside the run's temporary profile changes. Without that setting
/// headless Chromium waits for a person to pick a certificate.
public struct ChromiumClientCertificate: Hashable, Sendable {
    /// The certificate and its key as PKCS#12, encrypted with `password`.
    public var pkcs12: [UInt8]
    public var password: String
    /// The certificate's issuer's common name: Chromium picks only a
    /// certificate of that issuer (nil: the profile's one certificate).
    public var issuerCommonName: String?
    /// Origins (`https://host:port`) the browser presents it to when asked.
    public var origins: [String]

    public init(pkcs12: [UInt8], password: String, issuerCommonName: String?, origins: [String]) {
        self.pkcs12 = pkcs12
        self.password = password
        self.issuerCommonName = issuerCommonName
        self.origins = origins
    }
}
