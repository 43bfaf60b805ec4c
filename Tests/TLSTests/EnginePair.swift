import TLS
import XCTest

/// A client and a server engine wired back to back in memory. `pump()` moves
/// ciphertext both ways, driving handshakes and collecting plaintext, until
/// neither engine has bytes to send.
final class EnginePair {
    let client: TLSEngine
    let server: TLSEngine
    private(set) var clientReceived: [UInt8] = []
    private(set) var serverReceived: [UInt8] = []
    /// The first error `readPlaintext()` threw on each side.
    private(set) var clientReadError: TLSError?
    private(set) var serverReadError: TLSError?

    init(client: TLSContext, server: TLSContext, serverName: String? = "example.test") throws {
        self.client = try TLSEngine(context: client, serverName: serverName)
        self.server = try TLSEngine(context: server)
    }

    func pump() {
        var moved = true
        var rounds = 0
        while moved {
            rounds += 1
            precondition(rounds < 10_000, "engines keep talking")
            step(client, received: &clientReceived, readError: &clientReadError)
            step(server, received: &serverReceived, readError: &serverReadError)
            moved = false
            let toServer = client.takeOutbound()
            if !toServer.isEmpty { server.feed(toServer); moved = true }
            let toClient = server.takeOutbound()
            if !toClient.isEmpty { client.feed(toClient); moved = true }
        }
    }

    private func step(_ engine: TLSEngine, received: inout [UInt8], readError: inout TLSError?) {
        if engine.state == .handshaking {
            _ = engine.handshake()
        }
        switch engine.state {
        case .established, .closeNotifySent:
            do {
                received += try engine.readPlaintext()
            } catch {
                if readError == nil { readError = error }
            }
        default:
            break
        }
    }

    /// The error that ended a side, from its state.
    static func failure(of engine: TLSEngine) -> TLSError? {
        if case .failed(let error) = engine.state { return error }
        return nil
    }
}

extension XCTestCase {
    func certificates() throws -> TestCertificates {
        try TestCertificates.shared.get()
    }

    func serverContext(_ configure: (inout TLSServerConfiguration) throws -> Void = { _ in }) throws -> TLSContext {
        var configuration = TLSServerConfiguration(identity: try certificates().serverIdentity)
        configuration.keyLog = .disabled
        try configure(&configuration)
        return try TLSContext(server: configuration)
    }

    func clientContext(_ configure: (inout TLSClientConfiguration) throws -> Void = { _ in }) throws -> TLSContext {
        var configuration = TLSClientConfiguration(verification: .verify(.caFile(try certificates().caFile)))
        configuration.keyLog = .disabled
        try configure(&configuration)
        return try TLSContext(client: configuration)
    }
}

extension XCTestCase {
    /// Asserts that a side failed with `kind`, with `alert` on the wire, and that the
    /// error's description (what an engineer reads) mentions `text`.
    func assertTLSError(_ error: TLSError?, _ kind: TLSError.Kind, alert: TLSError.AlertEvent?, mentions text: String,
                        file: StaticString = #filePath, line: UInt = #line) {
        guard let error else { return XCTFail("expected a \(kind) error, got none", file: file, line: line) }
        XCTAssertEqual(error.kind, kind, "\(error)", file: file, line: line)
        XCTAssertEqual(error.alert, alert, "\(error)", file: file, line: line)
        XCTAssertTrue(error.description.contains(text), "\"\(error)\" does not mention \"\(text)\"", file: file, line: line)
    }
}
