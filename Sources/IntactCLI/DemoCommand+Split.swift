import Demo
import Faults
import ProxyAddons
import SignIn
import Wire

/// `intact demo --split NAME`: the app and the browser on different paths,
/// the two traps of the document's restrictions that only a split shows.
enum DemoSplit: String, Sendable, CaseIterable {
    /// Per-app VPN: the app is on the VPN (the proxy), the system browser
    /// is not: its path reaches nothing. Fixed by putting the browser on the
    /// VPN too (plain `intact demo`).
    case perAppVPNBrowserOff = "per-app-vpn-browser-off"
    /// The gateway (the proxy) asks every client for a certificate; the app
    /// holds one, the browser does not. `--browser-client-cert` gives the browser one: it passes.
    case clientCertAppOnly = "client-cert-app-only"

    /// One line for the demo's header.
    var summary: String {
        switch self {
        case .perAppVPNBrowserOff:
            return "per-app VPN: the app reaches the proxy, the browser's path reaches nothing (a closed loopback port as its proxy)"
        case .clientCertAppOnly:
            return "the proxy asks for a client certificate; the app holds one from the demo CA, the browser none"
        }
    }

    /// Applies the split to the demo's configuration; `browserHasCertificate` is `--browser-client-cert`.
    func apply(to configuration: inout DemoConfiguration, browserHasCertificate: Bool) throws {
        switch self {
        case .perAppVPNBrowserOff:
            configuration.browserPath = .proxy(try DemoSplit.deadEnd())
        case .clientCertAppOnly:
            configuration.presentsClientCertificate = true
            configuration.browserPresentsClientCertificate = browserHasCertificate
            do {
                let rules = try FaultPreset.rules(specification: "client-cert-required")
                configuration.proxyAddons.append(try FaultsAddon(engine: FaultEngine(rules: rules, seed: 1),
                                                                 contextPath: configuration.contextPath))
            } catch {
                throw CommandFailure("\(error)")
            }
        }
    }

    /// A loopback proxy address nothing listens on: a port bound and released again.
    static func deadEnd() throws -> ForwardProxy {
        do {
            let socket = try ListeningSocket(bindingTo: .loopbackIPv4(port: 0))
            let port = Int(socket.localAddress.port)
            socket.close()
            return ForwardProxy(host: "127.0.0.1", port: port)
        } catch {
            throw CommandFailure("cannot pick a loopback port: \(error)")
        }
    }
}
