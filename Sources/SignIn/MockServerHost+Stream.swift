import AuthFlow
import Evidence
import HTTP
import TLS
import Transport

extension MockServerHost {
    /// One request stream on the host: feeds `ServerExchange`, asks the mock
    /// server for the answer, sends it, and records the exchange.
    ///
    /// Lives from the stream's arrival until its last event; every method
    /// runs on the stream's loop. The stream's handler holds it.
    final class ServedStream {
        private let host: MockServerHost
        private let stream: HTTPServerStream
        private let connectionID: String
        private let tls: TLSConnectionInfo?
        private var exchange: ServerExchange
        /// The step the server gave its answer (the classifier's label before that).
        private var step: AuthStep
        private var recorded = false

        init(host: MockServerHost, stream: HTTPServerStream, connectionID: String, tls: TLSConnectionInfo?) {
            self.host = host
            self.stream = stream
            self.connectionID = connectionID
            self.tls = tls
            let subject = tls?.peerCertificate?.subject
            exchange = ServerExchange(head: stream.request, wire: stream.requestWire, connectionScheme: "https",
                                      clientCertificateSubject: subject, limit: host.bodyLimit,
                                      storeLimit: host.recorder?.settings.bodyStoreLimit ?? 0,
                                      digests: host.recorder?.settings.redaction.digests ?? .sha256, now: .now())
            step = host.classifier.classify(stream.request)
        }

        /// Installs the handler: events flow from now on. Called only on the loop.
        func start() {
            stream.setHandler { [self] event in handle(event) }
        }

        private var redaction: RedactionPolicy { host.recorder?.settings.redaction ?? RedactionPolicy() }

        private func handle(_ event: HTTPStreamEvent) {
            switch event {
            case .body(let bytes):
                act(exchange.receiveBody(bytes, now: .now(), redaction: redaction))
            case .end(let trailers):
                act(exchange.receiveEnd(trailers: trailers, now: .now(), redaction: redaction))
            case .failed(let error):
                record(responseComplete: false, error: error.recordedFailure(at: "server \(stream.version) stream"))
            case .writable, .response, .interimResponse:
                break
            }
        }

        private func act(_ action: ServerExchange.Action) {
            guard case .handle(let request, let requestComplete) = action else { return }
            var response = host.answer(request)
            step = response.step
            if !requestComplete && stream.version != .http2 {
                // HTTP/1.1 cannot skip the unread body: the connection ends after this answer.
                // (HTTP/2 discards the rest of the stream's body; no RST_STREAM(NO_ERROR) either,
                // since a client may then drop the complete answer.)
                response.head.fields.append("Connection", "close")
            }
            do throws(TransportError) {
                let wire = try stream.sendHead(response.head)
                exchange.sentResponseHead(response.head, wire: wire, storeLimit: host.recorder?.settings.bodyStoreLimit ?? 0,
                                          now: .now())
                // A HEAD's answer carries no body (the stream drops it): recorded as sent.
                if request.head.method != .head {
                    try stream.sendBody(response.body)
                    exchange.sentResponseBody(response.body)
                }
                try stream.sendEnd()
            } catch {
                record(responseComplete: false, error: error.recordedFailure(at: "server response"))
                return
            }
            record(responseComplete: true, error: nil)
        }

        /// Records the exchange once, whatever ended it.
        private func record(responseComplete: Bool, error: ExchangeRecord.Failure?) {
            guard !recorded else { return }
            recorded = true
            host.exchangeFinished()
            guard let recorder = host.recorder else { return }
            let (request, response) = exchange.finish(responseComplete: responseComplete, now: .now(),
                                                      redaction: recorder.settings.redaction)
            recorder.record(traceID: exchange.traceID, step: step.rawValue, connectionID: connectionID,
                            streamID: stream.version == .http2 ? stream.streamID : nil,
                            tls: tls.map { TLSDetails($0) }, request: request, response: response, error: error)
        }
    }
}
