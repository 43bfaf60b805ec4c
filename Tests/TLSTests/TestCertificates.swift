import Foundation
import IntactTestSupport
import TLS

/// Certificates made once per test run with the `openssl` command line, in a
/// fresh temporary directory (no key is ever committed): an ECDSA P-256 CA,
/// server leaves for example.test (+ IP 127.0.0.1) and other.test, a client
/// certificate, and an unrelated CA for "wrong CA" cases.
struct TestCertificates: Sendable {
    let directory: String

    var caFile: String { path("ca.pem") }
    var otherCAFile: String { path("other-ca.pem") }
    var serverCertificateFile: String { path("server.pem") }
    var serverKeyFile: String { path("server.key") }
    var otherServerCertificateFile: String { path("other-server.pem") }
    var otherServerKeyFile: String { path("other-server.key") }
    var clientCertificateFile: String { path("client.pem") }
    var clientKeyFile: String { path("client.key") }

    func path(_ name: String) -> String { directory + "/" + name }

    func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path(name))))
    }

    var serverIdentity: TLSIdentity {
        get throws { try TLSIdentity(certificateFile: serverCertificateFile, keyFile: serverKeyFile) }
    }

    var otherServerIdentity: TLSIdentity {
        get throws { try TLSIdentity(certificateFile: otherServerCertificateFile, keyFile: otherServerKeyFile) }
    }

    var clientIdentity: TLSIdentity {
        get throws { try TLSIdentity(certificateFile: clientCertificateFile, keyFile: clientKeyFile) }
    }

    /// Made on first use; a failure (no `openssl` binary) fails each test that needs them.
    static let shared: Result<TestCertificates, TestSetupError> = Result { () throws(TestSetupError) in try make() }

    private static let configuration = """
        [req]
        distinguished_name = dn
        prompt = no
        [dn]
        CN = unused
        [ca_ext]
        basicConstraints = critical, CA:TRUE
        keyUsage = critical, keyCertSign, cRLSign
        subjectKeyIdentifier = hash
        [server_ext]
        basicConstraints = critical, CA:FALSE
        keyUsage = critical, digitalSignature
        extendedKeyUsage = serverAuth
        subjectAltName = DNS:example.test, IP:127.0.0.1
        [other_server_ext]
        basicConstraints = critical, CA:FALSE
        keyUsage = critical, digitalSignature
        extendedKeyUsage = serverAuth
        subjectAltName = DNS:other.test
        [client_ext]
        basicConstraints = critical, CA:FALSE
        keyUsage = critical, digitalSignature
        extendedKeyUsage = clientAuth

        """

    private static let directoryPrefix = "intact-tls-tests-"

    private static func make() throws(TestSetupError) -> TestCertificates {
        removeDirectoriesOfFinishedRuns()
        let directory = NSTemporaryDirectory() + directoryPrefix + "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            try configuration.write(toFile: directory + "/openssl.cnf", atomically: true, encoding: .utf8)
        } catch {
            throw TestSetupError(message: "cannot prepare \(directory): \(error)")
        }
        let certificates = TestCertificates(directory: directory)
        try certificates.makeCA("ca", subject: "/CN=Intact Test CA")
        try certificates.makeCA("other-ca", subject: "/CN=Unrelated Test CA")
        try certificates.makeLeaf("server", subject: "/CN=example.test", extensions: "server_ext")
        try certificates.makeLeaf("other-server", subject: "/CN=other.test", extensions: "other_server_ext")
        try certificates.makeLeaf("client", subject: "/O=Intact Tests/CN=Intact Test Client", extensions: "client_ext")
        return certificates
    }

    /// Each run leaves its directory behind (tests may read it until the process ends);
    /// the next run removes those whose process is gone.
    private static func removeDirectoriesOfFinishedRuns() {
        let temporary = NSTemporaryDirectory()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
        for name in names where name.hasPrefix(directoryPrefix) {
            guard let pid = name.dropFirst(directoryPrefix.count).split(separator: "-").first.flatMap({ pid_t($0) }),
                  kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: temporary + name)
        }
    }

    private func makeKey(_ name: String) throws(TestSetupError) {
        try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path("\(name).key")])
    }

    private func makeCA(_ name: String, subject: String) throws(TestSetupError) {
        try makeKey(name)
        try openssl(["req", "-new", "-x509", "-config", path("openssl.cnf"), "-extensions", "ca_ext",
                     "-key", path("\(name).key"), "-subj", subject, "-days", "2", "-out", path("\(name).pem")])
    }

    private func makeLeaf(_ name: String, subject: String, extensions: String) throws(TestSetupError) {
        try makeKey(name)
        try openssl(["req", "-new", "-config", path("openssl.cnf"), "-key", path("\(name).key"),
                     "-subj", subject, "-out", path("\(name).csr")])
        try openssl(["x509", "-req", "-in", path("\(name).csr"), "-CA", caFile, "-CAkey", path("ca.key"),
                     "-set_serial", "\(UInt32.random(in: 1...UInt32.max))", "-days", "2",
                     "-extfile", path("openssl.cnf"), "-extensions", extensions, "-out", path("\(name).pem")])
    }

    private func openssl(_ arguments: [String]) throws(TestSetupError) {
        let run: ToolRun
        do {
            run = try ToolRun.openssl(arguments)
        } catch {
            throw TestSetupError(message: "cannot run openssl: \(error)")
        }
        guard run.status == 0 else {
            throw TestSetupError(message: "openssl \(arguments.joined(separator: " ")) failed: " + run.error)
        }
    }
}

struct TestSetupError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
