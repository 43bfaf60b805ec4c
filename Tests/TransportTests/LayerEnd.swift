import TLS
import Transport
import XCTest

/// One command a `ChannelSecurityLayer` asked for, as a test script writes it.
enum LayerCommand: Equatable {
    case armDeadline(Duration)
    case cancelDeadline
    /// Bytes for the socket, as they are (a plaintext end).
    case send([UInt8])
    /// Ciphertext for the socket (a TLS end); the script checks it is whole TLS records.
    case sendTLS
    case shutdownWrite
    case close(TransportError?)
    case reset(TransportError?)
    case clientHello(serverName: String?)
    case established(alpn: String?)
    case establishedPlaintext
    case received([UInt8])
    case readEOF(ReadEnd)
    case updateReading
    case later(ChannelSecurityLayer.Step)
    case then(ChannelSecurityLayer.Step)
}

/// One end of a channel with no socket: it carries out a layer's `Output`
/// as `ByteChannel` does, but into memory, and logs each command. Bytes it
/// sends wait in `wire` until a test moves them to the peer; steps for the
/// next loop turn wait until `turn()`.
final class LayerEnd {
    var layer: ChannelSecurityLayer
    /// Whether what this end sends is TLS records (logged as `.sendTLS`).
    var speaksTLS: Bool
    /// Every command since the last `takeScript()`.
    private(set) var script: [LayerCommand] = []
    /// Bytes sent and not yet handed to the peer.
    var wire: [UInt8] = []
    /// Application bytes reported with `.received`.
    private(set) var received: [UInt8] = []
    /// The last `.established` reported.
    private(set) var established: TLSConnectionInfo??
    /// How the socket was closed, if it was.
    private(set) var closedWith: ChannelSecurityLayer.Close?
    /// Whether the handshake deadline runs.
    private(set) var deadlineArmed = false
    private var laterSteps: [ChannelSecurityLayer.Step] = []
    /// The owner: answers events (for example `.clientHello`) by calling back into this end.
    var owner: ((ChannelEvent, LayerEnd) -> Void)?

    init(_ security: ChannelSecurity) {
        layer = ChannelSecurityLayer(security: security)
        if case .plaintext = security { speaksTLS = false } else { speaksTLS = true }
    }

    /// Runs one layer call and carries out what it asked.
    func call(_ body: (inout ChannelSecurityLayer, inout ChannelSecurityLayer.Output) -> Void) {
        var output = ChannelSecurityLayer.Output()
        body(&layer, &output)
        perform(output)
    }

    func start() { call { $0.start(into: &$1) } }
    func receive(_ bytes: [UInt8]) { call { $0.receive(bytes, into: &$1) } }

    /// Receives `bytes` as a lending connection gives them: lent for the
    /// call only, then the buffer is overwritten (as the loop reuses it).
    func receiveLent(_ bytes: [UInt8]) {
        var buffer = bytes
        buffer.withUnsafeBytes { lent in call { $0.receive(lent: lent, into: &$1) } }
        buffer.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0xEE) }
    }
    func readEOF() { call { $0.readEOF(into: &$1) } }
    func shutdownWrite() { call { $0.shutdownWrite(into: &$1) } }
    func close() { call { $0.close(into: &$1) } }
    func deadlinePassed() { call { $0.handshakeDeadlinePassed(into: &$1) } }

    @discardableResult
    func write(_ bytes: [UInt8]) -> ChannelSecurityLayer.WriteOutcome {
        var outcome = ChannelSecurityLayer.WriteOutcome.refused
        call { outcome = $0.write(bytes, into: &$1) }
        return outcome
    }

    @discardableResult
    func startTLS(_ security: ChannelSecurity, leftover: [UInt8] = []) -> Bool {
        var started = false
        call { started = $0.startTLS(security, leftover: leftover, into: &$1) }
        if started { speaksTLS = true }
        return started
    }

    /// Runs the steps queued for the next loop turn; returns whether there were any.
    @discardableResult
    func turn() -> Bool {
        let steps = laterSteps
        laterSteps = []
        for step in steps { call { $0.step(step, into: &$1) } }
        return !steps.isEmpty
    }

    /// The commands logged since the last call.
    func takeScript() -> [LayerCommand] {
        defer { script = [] }
        return script
    }

    /// Moves what this end sent to `peer`; returns whether there was anything.
    @discardableResult
    func transmit(to peer: LayerEnd) -> Bool {
        guard !wire.isEmpty else { return false }
        let bytes = wire
        wire = []
        peer.receive(bytes)
        return true
    }

    private func perform(_ output: ChannelSecurityLayer.Output) {
        switch output.deadline {
        case .arm(let duration)?:
            deadlineArmed = true
            script.append(.armDeadline(duration))
        case .cancel?:
            deadlineArmed = false
            script.append(.cancelDeadline)
        case nil:
            break
        }
        if output.updateReading { script.append(.updateReading) }
        if let bytes = output.send {
            if speaksTLS {
                assertWholeTLSRecords(bytes)
                script.append(.sendTLS)
            } else {
                script.append(.send(bytes))
            }
            wire += bytes
        }
        if output.shutdownWrite { script.append(.shutdownWrite) }
        if let close = output.close {
            XCTAssertNil(closedWith, "the socket closes once")
            closedWith = close
            deadlineArmed = false
            switch close {
            case .close(let reason): script.append(.close(reason))
            case .reset(let reason): script.append(.reset(reason))
            }
        }
        if let event = output.event {
            switch event {
            case .clientHello(let hello): script.append(.clientHello(serverName: hello.serverName))
            case .established(let info?):
                established = info
                script.append(.established(alpn: info.alpn))
            case .established(nil):
                established = .some(nil)
                script.append(.establishedPlaintext)
            case .received(let bytes):
                XCTAssertFalse(bytes.isEmpty, "received events are never empty")
                received += bytes
                script.append(.received(bytes))
            case .readEOF(let end): script.append(.readEOF(end))
            case .writable, .closed: XCTFail("the layer reports no \(event)")
            }
            owner?(event, self)
        }
        if let step = output.later {
            script.append(.later(step))
            laterSteps.append(step)
        }
        if let step = output.then {
            script.append(.then(step))
            call { $0.step(step, into: &$1) }
        }
    }

    /// Checks that `bytes` are whole TLS records (type 20...23, version 3.x).
    private func assertWholeTLSRecords(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) {
        var offset = 0
        while offset < bytes.count {
            guard bytes.count - offset >= 5 else { return XCTFail("a partial record header", file: file, line: line) }
            XCTAssertTrue((20...23).contains(bytes[offset]), "record type \(bytes[offset])", file: file, line: line)
            XCTAssertEqual(bytes[offset + 1], 3, "record version major", file: file, line: line)
            offset += 5 + (Int(bytes[offset + 3]) << 8 | Int(bytes[offset + 4]))
        }
        XCTAssertEqual(offset, bytes.count, "the last record is cut", file: file, line: line)
    }
}

/// Runs loop turns and moves bytes both ways until neither end has anything to do.
func pump(_ a: LayerEnd, _ b: LayerEnd) {
    var rounds = 0
    while [a.turn(), b.turn(), a.transmit(to: b), b.transmit(to: a)].contains(true) {
        rounds += 1
        precondition(rounds < 1000, "the ends keep talking")
    }
}
