import Foundation
import Glibc

/// A fresh browser profile in a temporary directory, removed by `remove()`:
/// the user-data directory and, as `HOME`, the NSS database Chromium on
/// Linux reads trust from (`$HOME/.pki/nssdb`), filled with `certutil`
/// (Debian `libnss3-tools`). No client certificate goes in: headless
/// Chromium waits for a person to pick one (only the machine-wide
/// `AutoSelectCertificateForUrls` policy picks one unasked), so a
/// gateway's challenge is always met without one.
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
    /// certificate) trusted for TLS servers. On failure nothing is left behind.
    public static func create(trustedCA: String?, environment: [String: String]) throws(BrowserLaunchError) -> ChromiumProfile {
        var template = Array((NSTemporaryDirectory() + "/intact-chromium-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw .profile("cannot make a temporary directory: \(String(cString: strerror(errno)))")
        }
        let profile = ChromiumProfile(directory: String(cString: made))
        do throws(BrowserLaunchError) {
            try profile.prepare(trustedCA: trustedCA, environment: environment)
        } catch {
            profile.remove()
            throw error
        }
        return profile
    }

    private func prepare(trustedCA: String?, environment: [String: String]) throws(BrowserLaunchError) {
        do {
            try FileManager.default.createDirectory(atPath: directory + "/.pki/nssdb", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: userData, withIntermediateDirectories: true)
        } catch {
            throw .profile("\(error)")
        }
        guard let trustedCA else { return }
        guard let certutil = ChromiumSettings.findOnPath(["certutil"], environment: environment) else {
            throw .toolMissing(tool: "certutil", package: ChromiumProfile.nssToolsPackage)
        }
        try run(certutil, ["-N", "-d", nssDatabase, "--empty-password"])
        // `certutil -A` takes the file's first certificate: the CA itself in Intact's files.
        try run(certutil, ["-A", "-d", nssDatabase, "-n", "Intact CA", "-t", "C,,", "-i", trustedCA])
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

    /// Removes the directory and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }
}
