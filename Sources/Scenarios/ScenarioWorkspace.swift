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

    /// Renders the configuration template and the scenario's other
    /// templates with the plan's values, rendered path → text; nothing is written.
    public static func renderConfig(_ plan: ScenarioPlan) throws(ScenarioError) -> [(path: String, text: String)] {
        var rendered: [(path: String, text: String)] = []
        for (template, path) in [(plan.scenario.configFile, plan.files.renderedConfig)]
            + plan.scenario.files.map({ ($0, plan.files.renderedFiles[$0] ?? "") }) {
            let text: String
            do {
                text = try String(contentsOfFile: template, encoding: .utf8)
            } catch {
                throw .configMissing(file: template)
            }
            rendered.append((path, try ConfigTemplate(file: template, text: text).render(plan.placeholderValues)))
        }
        return rendered
    }

    /// Writes every file of `plan` into its (existing) run directory: the
    /// run's CA and certificates, the intermediary's directories, its
    /// rendered templates, the files its kind generates and the defaults it
    /// copies, its own CA when it inspects TLS, and the ownership it needs.
    public static func prepare(_ plan: ScenarioPlan) throws(ScenarioError) {
        let rendered = try renderConfig(plan)
        let files = plan.files
        let kind = plan.scenario.intermediary
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
            let directories = try ([files.workDirectory] + kind.directories).map { (template: String) throws(ScenarioError) in
                try ConfigTemplate(file: "the \(kind.displayName) kind", text: template).render(plan.placeholderValues)
            }
            for directory in directories + [(files.renderedConfig as NSString).deletingLastPathComponent] {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            }
            for file in rendered { try write(file.text, to: file.path, mode: 0o644) }
            let provided = Set(rendered.map(\.path))
            for generated in kind.generatedFiles {
                let origin = "the \(kind.displayName) kind"
                let path = try ConfigTemplate(file: origin, text: generated.path).render(plan.placeholderValues)
                if generated.unlessProvided && provided.contains(path) { continue }
                try write(try ConfigTemplate(file: origin, text: generated.text).render(plan.placeholderValues), to: path,
                          mode: 0o644)
            }
            if let defaults = kind.copiesDefaultsFrom {
                try copyMissing(from: defaults, to: (files.renderedConfig as NSString).deletingLastPathComponent)
            }
            if let bumpCA = files.bumpCADirectory {
                // A name of its own: tap A trusts it beside the run's CA, and Squid's certificates
                // carry no authority key identifier to tell two CAs of one name apart.
                _ = try CertificateAuthority.loadOrCreate(in: bumpCA, commonName: "Intact scenario: \(kind.displayName)'s inspection CA")
                let runCA = try String(contentsOfFile: files.caCertificate, encoding: .utf8)
                let ownCA = try String(contentsOfFile: bumpCA + "/ca-cert.pem", encoding: .utf8)
                try write(runCA + ownCA, to: files.tapATrust, mode: 0o644)
            }
            if kind.workUser != nil {
                try FileManager.default.copyItem(atPath: files.caCertificate, toPath: files.workDirectory + "/ca-cert.pem")
            }
        } catch let error as ScenarioError {
            throw error
        } catch {
            throw .runDirectory(path: plan.runDirectory, reason: "\(error)")
        }
    }

    /// Gives the intermediary's directory to the user its kind drops to, and
    /// lets that user through the run directory (0711: it lists nothing).
    /// Called after the setup commands, whose files it covers too.
    public static func handOverWorkDirectory(_ plan: ScenarioPlan) throws(ScenarioError) {
        guard let user = plan.scenario.intermediary.workUser else { return }
        guard let entry = getpwnam(user) else {
            throw .runDirectory(path: plan.files.workDirectory,
                                reason: "\(plan.scenario.intermediary.displayName) runs as the user \(user), which does not exist "
                                    + "(is its package installed? \(plan.scenario.intermediary.packages.joined(separator: " ")))")
        }
        let uid = entry.pointee.pw_uid, gid = entry.pointee.pw_gid
        let root = plan.files.workDirectory
        let paths = [root] + (FileManager.default.subpaths(atPath: root) ?? []).map { root + "/" + $0 }
        for path in paths where lchown(path, uid, gid) != 0 {
            throw .runDirectory(path: path, reason: "cannot give it to \(user): \(String(cString: strerror(errno)))")
        }
        guard chmod(plan.runDirectory, 0o711) == 0 else {
            throw .runDirectory(path: plan.runDirectory, reason: "chmod 0711: \(String(cString: strerror(errno)))")
        }
        // Every directory above must let the user through too; the runner changes none of them.
        var ancestor = (plan.runDirectory as NSString).deletingLastPathComponent
        while ancestor != "/" && !ancestor.isEmpty {
            var status = stat()
            if stat(ancestor, &status) == 0 && status.st_mode & S_IXOTH == 0 && status.st_uid != uid {
                throw .runDirectory(path: plan.runDirectory, reason: "\(plan.scenario.intermediary.displayName) runs as "
                                    + "\(user), which cannot pass through \(ancestor): chmod o+x \(ancestor), or give --run-dir "
                                    + "a directory others may pass through")
            }
            ancestor = (ancestor as NSString).deletingLastPathComponent
        }
    }

    /// Copies each regular file and directory of `source` that `destination` lacks.
    private static func copyMissing(from source: String, to destination: String) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: source) {
            let target = destination + "/" + name
            if FileManager.default.fileExists(atPath: target) { continue }
            try FileManager.default.copyItem(atPath: source + "/" + name, toPath: target)
        }
    }

    private static func write(_ text: String, to path: String, mode: Int) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8),
                                             attributes: [.posixPermissions: mode]) else {
            throw ScenarioError.runDirectory(path: path, reason: "cannot write \(path)")
        }
    }
}
