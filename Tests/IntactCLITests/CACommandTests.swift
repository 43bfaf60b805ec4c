import Foundation
import IntactTestSupport
import XCTest
@testable import IntactCLI

/// The result of one `intact` invocation through the library entry point.
struct Invocation {
    let status: Int32
    let output: String
    let error: String
}

extension XCTestCase {
    /// Runs `intact` with `arguments`, capturing both output streams.
    func intact(_ arguments: [String], environment: [String: String]? = nil) -> Invocation {
        let output = CapturedOutput()
        let error = CapturedOutput()
        let context = environment.map {
            CommandContext(standardOutput: output.writer, standardError: error.writer, environment: $0)
        } ?? CommandContext(standardOutput: output.writer, standardError: error.writer)
        let status = IntactCommandLine.run(arguments, context: context)
        return Invocation(status: status, output: output.text, error: error.text)
    }

}

final class CACommandTests: XCTestCase {
    func testInitCreatesACACertificateThatOpenSSLReadsAsACA() throws {
        let directory = makeTemporaryDirectory() + "/certs"
        let run = intact(["ca", "init", "--dir", directory])
        XCTAssertEqual(run.status, 0, run.error)
        XCTAssertEqual(run.error, "")
        XCTAssertTrue(run.output.hasPrefix("Created a development CA in \(directory).\n"), run.output)
        XCTAssertTrue(run.output.contains("curl --cacert \(directory)/ca-cert.pem"), run.output)

        let text = try runOpenSSL(["x509", "-in", directory + "/ca-cert.pem", "-noout", "-text"])
        XCTAssertEqual(text.status, 0, text.output)
        XCTAssertTrue(text.output.contains("CA:TRUE"), text.output)
        let attributes = try FileManager.default.attributesOfItem(atPath: directory)
        XCTAssertEqual(attributes[.posixPermissions] as? Int, 0o700)
    }

    func testInitTwiceKeepsTheFirstCA() throws {
        let directory = makeTemporaryDirectory() + "/certs"
        let first = intact(["ca", "init", "--dir=\(directory)"])
        let before = try Data(contentsOf: URL(fileURLWithPath: directory + "/ca-key.pem"))
        let second = intact(["ca", "init", "--dir", directory])
        XCTAssertEqual(second.status, 0, second.error)
        XCTAssertTrue(second.output.hasPrefix("A development CA already exists in \(directory); it was not overwritten.\n"),
                      second.output)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: directory + "/ca-key.pem")), before)
        let fingerprint = { (text: String) in text.split(separator: "\n").first { $0.contains("SHA-256:") } }
        XCTAssertNotNil(fingerprint(first.output))
        XCTAssertEqual(fingerprint(first.output), fingerprint(second.output))
    }

    func testShowDescribesTheCAOrSaysThereIsNone() {
        let directory = makeTemporaryDirectory() + "/certs"
        let missing = intact(["ca", "show", "--dir", directory])
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.output, "")
        XCTAssertEqual(missing.error, "intact: no development CA in \(directory) (no ca-cert.pem); "
                       + "create one with: intact ca init --ca-dir \(directory)\n")

        XCTAssertEqual(intact(["ca", "init", "--dir", directory]).status, 0)
        let shown = intact(["ca", "show", "--dir", directory])
        XCTAssertEqual(shown.status, 0, shown.error)
        XCTAssertTrue(shown.output.contains("  Subject:      CN=Intact Development CA ("), shown.output)
        XCTAssertTrue(shown.output.contains("  Certificate:  \(directory)/ca-cert.pem\n"), shown.output)
        XCTAssertTrue(shown.output.contains("  Valid:        "), shown.output)
    }

    func testShowRefusesAnOpenDirectoryNamingIt() {
        let directory = makeTemporaryDirectory() + "/certs"
        XCTAssertEqual(intact(["ca", "init", "--dir", directory]).status, 0)
        XCTAssertEqual(chmod(directory, 0o755), 0)
        let shown = intact(["ca", "show", "--dir", directory])
        XCTAssertEqual(shown.status, 1)
        XCTAssertEqual(shown.error, "intact: \(directory) is readable by group or others (mode 0755); "
                       + "run chmod 700 \(directory)\n")
    }

    func testIssueClientWritesAPrivatePKCS12ThatOpenSSLReads() throws {
        let directory = makeTemporaryDirectory()
        let certs = directory + "/certs"
        let file = directory + "/alice.p12"
        let run = intact(["ca", "issue-client", "alice", "--out", file, "--dir", certs, "--validity-days", "10"])
        XCTAssertEqual(run.status, 0, run.error)
        XCTAssertTrue(run.output.hasPrefix("Created a development CA in \(certs)"), run.output)
        XCTAssertTrue(run.output.contains("Issued a client certificate for CN=alice: \(file)"), run.output)
        XCTAssertTrue(run.output.contains("Password:  intact (the default)"), run.output)
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        XCTAssertEqual(attributes[.posixPermissions] as? Int, 0o600)

        let read = try runOpenSSL(["pkcs12", "-in", file, "-passin", "pass:intact", "-nokeys"])
        XCTAssertEqual(read.status, 0, read.output)
        XCTAssertTrue(read.output.contains("subject=CN = alice"), read.output)

        let again = intact(["ca", "issue-client", "bob", "--out", file, "--dir", certs, "--password", "pw"])
        XCTAssertEqual(again.status, 1)
        XCTAssertEqual(again.error, "intact: \(file) already exists; refusing to overwrite it\n")

        let custom = directory + "/carol.p12"
        let withPassword = intact(["ca", "issue-client", "carol", "--out", custom, "--dir", certs, "--password", "pw"])
        XCTAssertEqual(withPassword.status, 0, withPassword.error)
        XCTAssertFalse(withPassword.output.contains("Created a development CA"), withPassword.output)
        XCTAssertTrue(withPassword.output.contains("Password:  as given with --password"), withPassword.output)
        XCTAssertEqual(try runOpenSSL(["pkcs12", "-in", custom, "-passin", "pass:pw", "-nokeys"]).status, 0)
    }

    func testIssueClientUsageErrorsExitWithStatusTwoAndShowUsage() {
        let directory = makeTemporaryDirectory()
        let cases: [([String], String)] = [
            (["ca", "issue-client", "--out", directory + "/x.p12"], "missing argument NAME"),
            (["ca", "issue-client", "alice"], "missing option --out FILE"),
            (["ca", "issue-client", "alice", "--out", directory + "/x.p12", "--validity-days", "0"],
             "option --validity-days expects a whole number from 1 to 3650, got '0'"),
            (["ca", "issue-client", "alice", "--out", directory + "/x.p12", "--passwrd", "x"],
             "unknown option '--passwrd' for 'intact ca issue-client'"),
        ]
        for (words, message) in cases {
            let run = intact(words + ["--dir", directory + "/certs"])
            XCTAssertEqual(run.status, 2, "\(words)")
            XCTAssertEqual(run.output, "")
            XCTAssertTrue(run.error.hasPrefix("intact: \(message)\n\nUsage: intact ca issue-client NAME --out FILE [options]\n"),
                          run.error)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory + "/certs"), "no CA made by a usage error")
    }
}
