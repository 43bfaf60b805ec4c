import Foundation
import TLS

/// Writes the files a plan needs into its run directory: the development CA,
/// the load balancer's certificate and bundle, tap A's client certificate
/// when the scenario wants one, and the rendered configuration.
/// Blocks on disk I/O and key generation.
public enum ScenarioWorkspace {
    /// A fresh run directory (mode 0700) under `parent`, named after the scenario.
    public static func makeRunDirectory(for scenario: Scenario, under parent: String) throws(ScenarioError) -> String {
        do {
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        } catch {
            throw .runDirectory(path: parent, reason: error.localizedDescription)
        }
        let stem = scenario.name.replacingOccurrences(of: "/", with: "-")
        var template = Array((parent + "/\(stem)-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw .runDirectory(path: parent, reason: String(cString: strerror(errno)))
        }
        return String(cString: made)
    }

    /// Renders the configuration template with the plan's values; nothing is written.
    public static func renderConfig(_ plan: ScenarioPlan) throws(ScenarioError) -> String {
        let file = plan.scenario.configFile
        let text: String
        do {
            text = try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            throw .configMissing(file: file)
        }
        if plan.scenario.loadBalancer == .haproxy && !text.contains("{{LISTEN}}") {
            // The runner hands HAProxy its reserved socket as `fd@3`; a bind of
            // the address and port would find the port held by that socket.
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            let line = (lines.firstIndex { $0.contains("{{LISTEN_PORT}}") } ?? 0) + 1
            throw .configTemplate(file: file, line: line, reason: "HAProxy must 'bind {{LISTEN}}' (the runner hands it "
                                  + "the listening socket it reserved, as fd@3), not the address and port")
        }
        return try ConfigTemplate(file: file, text: text).render(plan.placeholderValues)
    }

    /// Writes every file of `plan` into its (existing) run directory.
    public static func prepare(_ plan: ScenarioPlan) throws(ScenarioError) {
        let rendered = try renderConfig(plan)
        let files = plan.files
        do {
            let (authority, _) = try CertificateAuthority.loadOrCreate(in: files.caDirectory)
            let leaf = try authority.leaf(for: ScenarioPlan.loopbackHost)
            let key = try String(contentsOfFile: files.loadBalancerKey, encoding: .utf8)
            try write(leaf.certificatePEM, to: files.loadBalancerCertificate, mode: 0o644)
            try write(leaf.certificatePEM + key, to: files.loadBalancerBundle, mode: 0o600)
            if plan.scenario.tapAPresentsClientCertificate {
                let issued = try authority.issueClient(commonName: "tap-a", password: ScenarioPlan.clientCertificatePassword)
                try? FileManager.default.removeItem(atPath: files.clientCertificate)
                try PKCS12.write(issued.pkcs12, toFile: files.clientCertificate)
            }
        } catch let error as ScenarioError {
            throw error
        } catch {
            throw .certificates(reason: "\(error)")
        }
        do {
            try write(rendered, to: files.renderedConfig, mode: 0o644)
        } catch {
            throw .runDirectory(path: plan.runDirectory, reason: "\(error)")
        }
    }

    private static func write(_ text: String, to path: String, mode: Int) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8),
                                             attributes: [.posixPermissions: mode]) else {
            throw ScenarioError.runDirectory(path: path, reason: "cannot write \(path)")
        }
    }
}
