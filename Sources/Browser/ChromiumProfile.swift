import Foundation
import Glibc

/// A fresh browser profile in a temporary directory, removed by `remove()`:
/// the user-data directory and, as `HOME`, the NSS database Chromium on
/// Linux reads trust from (`$HOME/.pki/nssdb`), filled with `certutil`
/// (Debian `libnss3-tools`). A client certificate, when given, goes into the
/// same database (`pk12util`) and the profile's preferences tell Chromium to
/// present it unasked to the run's origins (`ChromiumClientCertificate`);
/// without one a gateway's challenge is met with none.
public struct ChromiumProfile: Sendable {
    /// The directory (HOME for the browser).
    public let directory: String
    /// `--user-data-dir`.
    public var userData: String { directory + "/user-data" }
    /// Where the browser's output goes.
    public var logPath: String { directory + "/chromium.log" }

    var nssDatabase: String { "sql:" + directory + "/.pki/nssdb" }

    /// The Debian package with certutil.
    public static let nssToolsPackage = "libnss3-tools"

    /// Makes the directory and the NSS database with `trustedCA` (a PEM
    /// certificate) trusted for TLS servers and `clientCertificate` imported.
    /// On failure nothing is left behind.
    public static func create(trustedCA: String?, clientCertificate: ChromiumClientCertificate? = nil,
                              environment: [String: String]) throws(BrowserLaunchError) -> ChromiumProfile {
        var template = Array((NSTemporaryDirectory() + "/intact-chromium-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw .profile("cannot make a temporary directory: \(String(cString: strerror(errno)))")
        }
        let profile = ChromiumProfile(directory: String(cString: made))
        do throws(BrowserLaunchError) {
            try profile.prepare(trustedCA: trustedCA, clientCertificate: clientCertificate, environment: environment)
        } catch {
            profile.remove()
            throw error
        }
        return profile
    }

    private func prepare(trustedCA: String?, clientCertificate: ChromiumClientCertificate?,
                         environment: [String: String]) throws(BrowserLaunchError) {
        do {
            try FileManager.default.createDirectory(atPath: directory + "/.pki/nssdb", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: userData + "/Default", withIntermediateDirectories: true)
        } catch {
            throw .profile("\(error)")
        }
        guard trustedCA != nil || clientCertificate != nil else { return }
        let certutil = try ChromiumProfile.tool("certutil", environment: environment)
        try run(certutil, ["-N", "-d", nssDatabase, "--empty-password"])
        if let trustedCA {
            // `certutil -A` takes the file's first certificate: the CA itself in Intact's files.
            try run(certutil, ["-A", "-d", nssDatabase, "-n", "Intact CA", "-t", "C,,", "-i", trustedCA])
        }
        if let clientCertificate { try install(clientCertificate, environment: environment) }
    }

    /// The certificate and key into the NSS database, then the preference
    /// that presents it unasked to the run's origins. The PKCS#12 file and
    /// its password file exist only while `pk12util` reads them.
    private func install(_ certificate: ChromiumClientCertificate, environment: [String: String]) throws(BrowserLaunchError) {
        let pk12util = try ChromiumProfile.tool("pk12util", environment: environment)
        let file = directory + "/client.p12"
        let passwordFile = directory + "/client.p12.password"
        defer {
            try? FileManager.default.removeItem(atPath: file)
            try? FileManager.default.removeItem(atPath: passwordFile)
        }
        for (path, bytes) in [(file, certificate.pkcs12), (passwordFile, Array(certificate.password.utf8))] {
            guard FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]) else {
                throw .profile("cannot write \(path)")
            }
        }
        // The password from a file, not the command line (which other users can read in /proc).
        try run(pk12util, ["-i", file, "-d", nssDatabase, "-w", passwordFile])
        let preferences = directory + "/user-data/Default/Preferences"
        guard FileManager.default.createFile(atPath: preferences, contents: Data(ChromiumProfile.preferences(certificate))) else {
            throw .profile("cannot write \(preferences)")
        }
    }

    /// The profile's `Preferences`: an `auto_select_certificate` exception
    /// per origin (`https://host:port,*`: any top frame) with a filter on the
    /// certificate's issuer, the form the `AutoSelectCertificateForUrls`
    /// policy takes, as a user setting of this profile only.
    static func preferences(_ certificate: ChromiumClientCertificate) -> [UInt8] {
        let filter: CDPValue = certificate.issuerCommonName.map { .object(["ISSUER": .object(["CN": .string($0)])]) } ?? .empty
        let exceptions = certificate.origins.map { origin in
            CDPValue.Member(origin + ",*", .object(["setting": .object(["filters": .array([filter])])]))
        }
        return CDPValue.object(["profile": .object(["content_settings": .object(["exceptions": .object([
            "auto_select_certificate": .object(exceptions),
        ])])])]).encoded
    }

    private static func tool(_ name: String, environment: [String: String]) throws(BrowserLaunchError) -> String {
        guard let found = ChromiumSettings.findOnPath([name], environment: environment) else {
            throw .toolMissing(tool: name, package: ChromiumProfile.nssToolsPackage)
        }
        return found
    }

    /// Runs a tool to completion; its output goes into the error when it fails.
    private func run(_ tool: String, _ arguments: [String]) throws(BrowserLaunchError) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw .profile("cannot run \(tool): \(error)")
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw .profile("\((tool as NSString).lastPathComponent) \(arguments.first ?? "") failed (status \(process.terminationStatus)): "
                           + text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// The last lines the browser wrote, for diagnoses, without its
    /// complaints about a missing D-Bus (every headless start on a server logs them).
    public func logTail(lines: Int = 5) -> String {
        guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return "" }
        return text.split(separator: "\n").filter { !$0.contains("dbus") }.suffix(lines).joined(separator: "\n")
    }

    /// Removes the directory and everything in it, and the directory
    /// Chromium made in `TMPDIR` for its singleton socket (the profile's
    /// `SingletonSocket` links to it; a killed browser never removes it).
    public func remove() {
        if let socket = try? FileManager.default.destinationOfSymbolicLink(atPath: userData + "/SingletonSocket") {
            let made = (socket as NSString).deletingLastPathComponent
            if (made as NSString).lastPathComponent.hasPrefix("org.chromium.Chromium.") {
                try? FileManager.default.removeItem(atPath: made)
            }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}
