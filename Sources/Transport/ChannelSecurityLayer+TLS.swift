import TLS

/// TLS: the ClientHello peek, the owner's decision, the handshake, and
/// application data through the engine.
extension ChannelSecurityLayer {
    /// Server with `ClientHelloPolicy.ask`, after `.clientHello`: go on with the
    /// handshake, with `context` (for example one chosen by SNI) or the setup's.
    /// The handshake resumes on the next turn (`Step.resumeHandshakeAfterDecision`),
    /// which also reopens reading, so nothing read later overtakes the peeked
    /// bytes. Ignored in any other phase.
    public mutating func continueHandshake(with context: TLSContext?, into output: inout Output) {
        guard case .awaitingDecision(let setup, let seen) = phase else { return }
        let engine: TLSEngine
        do {
            engine = try TLSEngine(context: context ?? setup.context)
        } catch {
            fail(.tlsHandshake(error), into: &output)
            return
        }
        engine.feed(seen)
        phase = .handshaking(engine)
        output.later = .resumeHandshakeAfterDecision
    }

    /// Server with `ClientHelloPolicy.ask`, after `.clientHello`: no TLS here.
    /// The channel turns plaintext on the next turn: `.established(nil)`, then
    /// the ClientHello bytes as `.received`, then whatever the peer sends next,
    /// all raw. Ignored in any other phase.
    public mutating func passThrough(into output: inout Output) {
        guard case .awaitingDecision(_, let seen) = phase else { return }
        output.deadline = .cancel
        startPlaintext(replaying: seen, into: &output)
    }

    /// Inspects the bytes received so far as a ClientHello.
    mutating func peek(_ setup: TLSServerSetup, seen: [UInt8], into output: inout Output) {
        switch ClientHelloPeek.inspect(seen) {
        case .needMoreData:
            phase = .peeking(setup, seen: seen)
        case .notTLS(let reason):
            fail(.tlsHandshake(TLSError(kind: .notTLS, explanation: reason)), into: &output)
        case .clientHello(let summary):
            clientHello = summary
            switch setup.clientHelloPolicy {
            case .proceed:
                let engine: TLSEngine
                do {
                    engine = try TLSEngine(context: setup.context)
                } catch {
                    fail(.tlsHandshake(error), into: &output)
                    return
                }
                engine.feed(seen)
                phase = .handshaking(engine)
                advanceHandshake(engine, into: &output)
            case .ask:
                phase = .awaitingDecision(setup, seen: seen)
                output.updateReading = true
                output.event = .clientHello(summary)
            }
        }
    }

    /// Runs the handshake as far as the bytes fed allow. On completion: the
    /// deadline is cancelled, queued writes go out, `.established` is
    /// reported, and `Step.readAfterHandshake` follows for application data
    /// that came with the peer's last flight.
    mutating func advanceHandshake(_ engine: TLSEngine, into output: inout Output) {
        let result = engine.handshake()
        flushOutbound(engine, into: &output)
        switch result {
        case .incomplete:
            return
        case .failed(let error):
            fail(.tlsHandshake(error), into: &output)
        case .complete:
            output.deadline = .cancel
            phase = .secured(engine)
            tlsInfo = engine.negotiated
            // What was odd about the SNI the client sent, which the handshake accepted.
            if let issue = clientHello?.serverNameIssue { tlsInfo?.serverNameIssue = issue }
            flushEarlyWrites(into: &output)
            output.event = .established(tlsInfo)
            output.then = .readAfterHandshake
        }
    }

    /// Decrypts what was fed. Plaintext is reported with `Step.checkReadEnd`
    /// to follow; without plaintext the check happens at once.
    mutating func readSecured(_ engine: TLSEngine, into output: inout Output) {
        let plaintext: [UInt8]
        do {
            plaintext = try engine.readPlaintext()
        } catch {
            fail(.tls(error), into: &output)
            return
        }
        flushOutbound(engine, into: &output)
        if plaintext.isEmpty {
            checkReadEnd(engine, into: &output)
        } else {
            output.event = .received(plaintext)
            output.then = .checkReadEnd
        }
    }

    /// After decrypting: a failure the engine kept for later, or the peer's close_notify.
    mutating func checkReadEnd(_ engine: TLSEngine, into output: inout Output) {
        switch engine.state {
        case .failed(let error):
            fail(.tls(error), into: &output)
        case .closeNotifyReceived, .closed:
            endReading(.closeNotify, into: &output)
        case .handshaking, .established, .closeNotifySent:
            return
        }
    }

    /// Encrypts; after our close_notify the bytes are refused.
    mutating func writeSecured(_ bytes: [UInt8], _ engine: TLSEngine, into output: inout Output) -> WriteOutcome {
        switch engine.state {
        case .established, .closeNotifyReceived:
            break
        case .handshaking, .closeNotifySent, .closed, .failed:
            return .refused
        }
        do {
            try engine.writePlaintext(bytes)
        } catch {
            fail(.tls(error), into: &output)
            return .refused
        }
        flushOutbound(engine, into: &output)
        return .accepted
    }

    /// Moves the engine's ciphertext, if any, into `output.send`.
    func flushOutbound(_ engine: TLSEngine, into output: inout Output) {
        guard engine.hasOutbound else { return }
        output.appendSend(engine.takeOutbound())
    }
}
