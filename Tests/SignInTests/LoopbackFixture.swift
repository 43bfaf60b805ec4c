import AuthFlow
import Evidence
import Foundation
import TLS
import Wire
import XCTest
@testable import SignIn

/// A development CA shared by the loopback tests, kept between runs in one
/// temporary directory (created by the first run, loaded by the next ones).
enum SharedCA {
    static let directory: String = {
        FileManager.default.temporaryDirectory.appendingPathComponent("intact-signin-tests-\(getuid())").path + "/certs"
    }()

    static let authority: CertificateAuthority = {
        do {
            return try CertificateAuthority.loadOrCreate(in: directory).authority
        } catch {
            preconditionFailure("cannot create the test CA: \(error)")
        }
    }()
}

/// A mock server host on an ephemeral loopback port, and clients pointed at it.
struct Loopback {
    let host: MockServerHost
    let started: MockServerHost.Started
    let serverRecording: String?

    /// Starts a host; `edit` adjusts its configuration first.
    static func start(_ test: XCTestCase, recording: Bool = false,
                      _ edit: (inout MockServerHost.Configuration) -> Void = { _ in }) throws -> Loopback {
        var configuration = MockServerHost.Configuration(
            server: MockServerConfiguration(externalOrigin: Origin(scheme: "https", host: "127.0.0.1")),
            listenAddress: .loopbackIPv4(port: 0), externalOriginFollowsListener: true,
            certificate: .authority(SharedCA.authority))
        edit(&configuration)
        var recorder: TapRecorder?
        var path: String?
        if recording {
            path = test.temporaryDirectory() + "/server.jsonl"
            recorder = try TapRecorder(path: path!, settings: .init(tap: "server", role: .server),
                                       toolVersion: "test", mode: "server")
        }
        let host = MockServerHost(configuration: configuration, recorder: recorder)
        let started = try host.start()
        test.addTeardownBlock {
            host.stop()
            _ = recorder?.close()
        }
        return Loopback(host: host, started: started, serverRecording: path)
    }

    /// `https://127.0.0.1:PORT/suite/rest/whatever`.
    var resourceURL: AbsoluteURL {
        AbsoluteURL(started.server.contextURL.serialized + "/rest/whatever")!
    }

    var origin: Origin { started.server.externalOrigin }

    /// A client configuration for this host, trusting the shared CA.
    func client(_ edit: (inout ClientRunner.Configuration) -> Void = { _ in }) -> ClientRunner.Configuration {
        var configuration = ClientRunner.Configuration(
            flow: SignInFlow.Configuration(resourceURL: resourceURL, traceRunID: "t\(UInt32.random(in: 0...UInt32.max))",
                                           expectsTraceEcho: true),
            trust: .caFile(SharedCA.authority.certificatePath), exchangeTimeout: .seconds(10))
        edit(&configuration)
        return configuration
    }

    /// Closes the server's recording and reads it back.
    func serverRecordingRead() throws -> Recording {
        host.stop()
        XCTAssertNil(host.recorder?.close())
        return try RecordingReader.read(path: try XCTUnwrap(serverRecording))
    }
}
