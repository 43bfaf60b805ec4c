import Foundation
import IntactTestSupport
import XCTest
@testable import IntactCLI

/// `intact ca show` and `intact ca export`, the per-user default directory,
/// and eight processes creating one new CA at once.
final class CAExportCommandTests: XCTestCase {
    func testWithoutCADirTheCAIsMadeOncePerUserUnderXDGDataHome() throws {
        let data = makeTemporaryDirectory() + "/data"
        let environment = ["XDG_DATA_HOME": data, "HOME": "/nonexistent"]
        let created = intact(["ca", "init"], environment: environment)
        XCTAssertEqual(created.status, 0, created.error)
        XCTAssertTrue(created.output.hasPrefix("Created a development CA in \(data)/intact.\n"), created.output)
        // From anywhere, every command finds the same CA.
        let shown = intact(["ca", "show"], environment: environment)
        XCTAssertEqual(shown.status, 0, shown.error)
        XCTAssertTrue(shown.output.hasPrefix("Development CA in \(data)/intact:\n"), shown.output)
        let fingerprint = { (text: String) in text.split(separator: "\n").first { $0.contains("SHA-256:") } }
        XCTAssertEqual(fingerprint(created.output), fingerprint(shown.output))
        XCTAssertTrue(shown.output.contains("--ignore-certificate-errors-spki-list="), shown.output)
        XCTAssertTrue(shown.output.contains("  Leaf SPKI:    "), shown.output)
        XCTAssertTrue(shown.output.contains("open http://intact.proxy/"), shown.output)
        // --ca-dir overrides the default.
        let other = makeTemporaryDirectory() + "/other"
        XCTAssertEqual(intact(["ca", "init", "--ca-dir", other], environment: environment).status, 0)
        XCTAssertNotEqual(fingerprint(intact(["ca", "show", "--ca-dir", other], environment: environment).output),
                          fingerprint(shown.output))
        XCTAssertEqual(intact(["ca", "show", "--ca-dir", other, "--dir", other]).status, 2)
    }

    func testExportWritesEachFormatToAFileOrStandardOutput() throws {
        let directory = makeTemporaryDirectory()
        let ca = directory + "/ca"
        let pem = intact(["ca", "export", "--ca-dir", ca])
        XCTAssertEqual(pem.status, 0, pem.error)
        XCTAssertEqual(pem.output, try String(contentsOfFile: ca + "/ca-cert.pem", encoding: .utf8))
        XCTAssertEqual(pem.error, "Created a development CA in \(ca).\n")

        let der = intact(["ca", "export", "--ca-dir", ca, "--format", "der", "--out", directory + "/intact-ca.crt"])
        XCTAssertEqual(der.status, 0, der.error)
        XCTAssertTrue(der.error.hasPrefix("Wrote \(directory)/intact-ca.crt (der, "), der.error)
        let parsed = try ToolRun.openssl(["x509", "-inform", "DER", "-in", directory + "/intact-ca.crt", "-noout", "-subject"])
        XCTAssertEqual(parsed.status, 0, parsed.error)
        XCTAssertTrue(parsed.output.contains("Intact Development CA"), parsed.output)

        // A directory as --out gets the format's own name: <subject_hash_old>.0 for Android's system store.
        let system = intact(["ca", "export", "--ca-dir", ca, "--format", "android-system", "--out", directory])
        XCTAssertEqual(system.status, 0, system.error)
        let hash = try ToolRun.openssl(["x509", "-in", ca + "/ca-cert.pem", "-noout", "-subject_hash_old"])
        let name = hash.output.trimmingCharacters(in: .whitespacesAndNewlines) + ".0"
        XCTAssertTrue(FileManager.default.fileExists(atPath: directory + "/" + name), system.error)

        for format in ["p12", "mobileconfig"] {
            let run = intact(["ca", "export", "--ca-dir", ca, "--format", format, "--out", directory + "/ca." + format])
            XCTAssertEqual(run.status, 0, run.error)
        }
        let profile = try String(contentsOfFile: directory + "/ca.mobileconfig", encoding: .utf8)
        XCTAssertTrue(profile.contains("<string>com.apple.security.root</string>"), profile)

        // Never overwritten; a bad format is a usage error.
        let again = intact(["ca", "export", "--ca-dir", ca, "--format", "der", "--out", directory + "/intact-ca.crt"])
        XCTAssertEqual(again.status, 1)
        XCTAssertEqual(again.error, "intact: \(directory)/intact-ca.crt already exists; refusing to overwrite it\n")
        let bad = intact(["ca", "export", "--ca-dir", ca, "--format", "cer"])
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.error.contains("option --format expects pem, der, p12, mobileconfig or android-system, got 'cer'"),
                      bad.error)
    }

    func testEightProcessesStartedAtOnceOnOneNewDirectoryShareOneCA() throws {
        let directory = makeTemporaryDirectory()
        let ca = directory + "/new/intact"
        let processes = try (0..<8).map { index in
            try IntactProcess(["ca", "init", "--ca-dir", ca], directory: directory, keepOutput: true, name: "init\(index)")
        }
        let statuses = processes.map { $0.waitForExit() }
        XCTAssertEqual(statuses, Array(repeating: 0, count: 8), processes.map(\.standardError).joined())
        let outputs = processes.map(\.standardOutput)
        XCTAssertEqual(outputs.filter { $0.hasPrefix("Created a development CA in \(ca).") }.count, 1, outputs.joined())
        XCTAssertEqual(outputs.filter { $0.hasPrefix("A development CA already exists in \(ca)") }.count, 7, outputs.joined())
        let fingerprints = Set(outputs.compactMap { $0.split(separator: "\n").first { $0.contains("SHA-256:") } })
        XCTAssertEqual(fingerprints.count, 1, outputs.joined())
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory + "/new"), ["intact"])
    }

    func testBadCADirectoriesAreNamedWithTheFix() throws {
        let directory = makeTemporaryDirectory()
        // Wrong permissions.
        let open = directory + "/open"
        XCTAssertEqual(intact(["ca", "init", "--ca-dir", open]).status, 0)
        XCTAssertEqual(chmod(open, 0o750), 0)
        let refused = intact(["proxy", "--ca-dir", open, "--listen", "127.0.0.1:0"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(refused.error, "intact: \(open) is readable by group or others (mode 0750); run chmod 700 \(open)\n")
        // A key that is not the certificate's.
        let mixed = directory + "/mixed", other = directory + "/other"
        XCTAssertEqual(intact(["ca", "init", "--ca-dir", mixed]).status, 0)
        XCTAssertEqual(intact(["ca", "init", "--ca-dir", other]).status, 0)
        XCTAssertEqual(unlink(mixed + "/ca-key.pem"), 0)
        try FileManager.default.copyItem(atPath: other + "/ca-key.pem", toPath: mixed + "/ca-key.pem")
        let mismatch = intact(["ca", "show", "--ca-dir", mixed])
        XCTAssertEqual(mismatch.status, 1)
        XCTAssertTrue(mismatch.error.hasPrefix("intact: \(mixed)/ca-key.pem is not the private key of the certificate in "
                                               + "\(mixed)/ca-cert.pem"), mismatch.error)
        // Half-written: the certificate without its keys.
        let half = directory + "/half"
        XCTAssertEqual(mkdir(half, 0o700), 0)
        try FileManager.default.copyItem(atPath: other + "/ca-cert.pem", toPath: half + "/ca-cert.pem")
        let incomplete = intact(["ca", "export", "--ca-dir", half])
        XCTAssertEqual(incomplete.status, 1)
        XCTAssertEqual(incomplete.error, "intact: \(half) holds a half-written CA: ca-key.pem, leaf-key.pem missing next to "
                       + "ca-cert.pem (an interrupted creation?); remove \(half)/ca-cert.pem and run again to make a new CA, "
                       + "or restore the missing file\n")
    }
}
