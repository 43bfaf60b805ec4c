import HTTP

/// Recognising an answer an intermediary made itself instead of passing the
/// server's on, when the intermediary says why: an RFC 9209 `Proxy-Status`
/// error (a proxy that could not reach its upstream, or whose upstream
/// handshake wanted a client certificate), or a gateway's fixed answer to a
/// missing client certificate. Such an answer is diagnosed by what it says,
/// not as an anonymous foreign response.
extension SignInFlow {
    /// Proxy error types (RFC 9209 §2.3) that mean the intermediary could not
    /// connect to its next hop (name, address, TCP or TLS).
    static let unreachableUpstreamErrors: Set<String> = [
        "dns_timeout", "dns_error", "destination_not_found", "destination_unavailable", "destination_ip_prohibited",
        "destination_ip_unroutable", "connection_refused", "connection_terminated", "connection_timeout",
        "connection_read_timeout", "connection_write_timeout", "connection_limit_reached",
        "tls_protocol_error", "tls_certificate_error", "tls_alert_received",
    ]

    /// Proxy error types that mean the next hop's answer could not be used
    /// (incomplete, oversized, unparseable, too slow).
    static let unusableResponseErrors: Set<String> = [
        "http_response_incomplete", "http_response_header_section_size", "http_response_header_size",
        "http_response_body_size", "http_response_trailer_section_size", "http_response_trailer_size",
        "http_response_transfer_coding", "http_response_content_coding", "http_response_timeout",
        "http_upgrade_failed", "http_protocol_error",
    ]

    /// TLS alerts (RFC 8446 §6.2) a server sends about the client's certificate:
    /// certificate_required (none presented), bad, unsupported, revoked,
    /// expired, unknown certificate, unknown CA.
    static let clientCertificateAlerts: Set<Int> = [116, 42, 43, 44, 45, 46, 48]

    /// nginx's fixed answers (status 400, its codes 496 and 495) when
    /// `ssl_verify_client` gets no client certificate or one it cannot verify:
    /// nginx finishes the handshake and answers with an HTML page instead of
    /// failing it.
    static let gatewayCertificateAnswers = [
        (phrase: "No required SSL certificate was sent", meaning: "no client certificate was presented"),
        (phrase: "The SSL certificate error", meaning: "the client certificate presented failed verification"),
    ]

    /// A `client-cert-required` failure; when the app has a certificate and
    /// goes through a forward proxy, it says the set-up is the cause.
    func clientCertificateFailure(_ evidence: String) -> FlowFailure {
        guard configuration.clientCertificateThroughForwardProxy else {
            return FlowFailure(mode: .clientCertRequired, evidence: evidence)
        }
        return FlowFailure(mode: .clientCertRequired, evidence: evidence
            + "; the app has a client certificate, but it went to the forward proxy in front, which terminates TLS and "
            + "cannot relay it: the certificate must be given to the tap in front (intact proxy --upstream-client-cert FILE.p12)")
    }

    /// The failure an intermediary's own answer shows, or nil when `r` is not one.
    func intermediaryAnswer(_ r: Received) -> FlowFailure? {
        if let status = ProxyStatus(r.head.fields), let entry = status.error, let error = entry.error {
            return proxyError(r, entry: entry, error: error)
        }
        if let failure = squidError(r) { return failure }
        if let echoed = r.request.traceID, r.head.fields[SignInFlow.traceFieldName] == echoed {
            return nil  // the server's own answer, whatever it says
        }
        guard [400, 495, 496].contains(r.status) else { return nil }
        let text = r.bodyText
        guard let answer = Self.gatewayCertificateAnswers.first(where: { text.contains($0.phrase) }) else { return nil }
        return clientCertificateFailure("\(r.status) from a gateway, not the server: \"\(answer.phrase)\" (nginx's answer when "
                                        + "ssl_verify_client requires a client certificate and \(answer.meaning))")
    }

    /// What the intermediary said about its failure: the first line of a
    /// short plain-text body when it holds the `details` (proxies, Intact's
    /// included, put where they failed there: `intact: upstream https://…:
    /// connection refused`), else `details`.
    private static func ownWords(_ r: Received, details: String?) -> String? {
        let line = r.reason
        let plainText = r.contentType.map { MediaType.essence(of: $0) == "text/plain" } ?? false
        guard plainText, !line.isEmpty, details.map(line.contains) ?? true else { return details }
        return line
    }

    /// A `Proxy-Status` error: where the intermediary failed, in its own words.
    private func proxyError(_ r: Received, entry: ProxyStatus.Entry, error: String) -> FlowFailure {
        var said = "Proxy-Status error=\(error)"
        if let nextHop = entry.nextHop { said += ", next-hop \(nextHop)" }
        if let alert = entry.alertID { said += ", alert-id \(alert)" }
        if let words = Self.ownWords(r, details: entry.details) { said += ": \(words)" }
        let answered = "\(r.status) from proxy \"\(entry.intermediary)\" answering for \(r.request.url.origin.authority), "
            + "not from the server"
        let details = HTTPField.lowercaseASCII(entry.details ?? "")
        let aboutClientCertificate = details.contains("client certificate") || details.contains("certificate required")
            || entry.alertID.map(Self.clientCertificateAlerts.contains) == true
        if error.hasPrefix("tls_") && aboutClientCertificate {
            return clientCertificateFailure(
                "\(answered): its upstream demanded a client certificate it did not have or did not accept (\(said))")
        }
        if r.request.step == .tokenExchange && ["connection_terminated", "http_response_incomplete"].contains(error) {
            return FlowFailure(mode: .resetTokenPost,
                               evidence: "\(answered): its upstream connection broke during the token POST (\(said))")
        }
        if Self.unreachableUpstreamErrors.contains(error) {
            return FlowFailure(mode: .transportFailure, evidence: "\(answered): it could not reach its upstream (\(said))")
        }
        if Self.unusableResponseErrors.contains(error) {
            return FlowFailure(mode: .transportFailure,
                               evidence: "\(answered): it got no usable response from its upstream (\(said))")
        }
        return FlowFailure(mode: .foreignResponse, evidence: "\(answered): it answered itself (\(said))")
    }
}
