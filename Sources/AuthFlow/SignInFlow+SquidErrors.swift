import HTTP

/// Squid's own answers: every error page Squid makes carries
/// `X-Squid-Error: ERR_… N`, naming what failed. A TLS-inspecting Squid
/// (ssl-bump) that cannot make its own TLS connection to the server answers
/// `ERR_SECURE_CONNECT_FAIL` (or `ERR_ZERO_SIZE_OBJECT` when the server's
/// refusal came after the handshake, as TLS 1.3 sends it); in front of a
/// client-certificate gateway that is the app's certificate failing to
/// cross it, since an inspecting proxy terminates the app's TLS.
extension SignInFlow {
    /// Squid error codes that mean its TLS connection onward failed or was closed unanswered.
    static let squidTLSErrors: Set<String> = ["ERR_SECURE_CONNECT_FAIL", "ERR_ZERO_SIZE_OBJECT"]
    /// Squid error codes that mean it could not reach the server at all.
    static let squidUnreachableErrors: Set<String> = [
        "ERR_CONNECT_FAIL", "ERR_DNS_FAIL", "ERR_READ_TIMEOUT", "ERR_CONNECT_TIMEOUT", "ERR_READ_ERROR", "ERR_WRITE_ERROR",
    ]

    /// The failure a Squid error page shows, or nil when `r` is not one.
    func squidError(_ r: Received) -> FlowFailure? {
        guard let field = r.head.fields["X-Squid-Error"],
              let code = field.split(separator: " ").first.map(String.init), code.hasPrefix("ERR_") else { return nil }
        let who = r.head.fields["Server"] ?? "Squid"
        var said = "X-Squid-Error: \(field)"
        if let words = Self.squidOwnWords(r.bodyText) { said += ": \"\(words)\"" }
        let answered = "foreign \(r.status) from \(who), not from the server (\(said))"
        if Self.squidTLSErrors.contains(code) {
            guard configuration.holdsClientCertificate else {
                return FlowFailure(mode: .transportFailure,
                                   evidence: "\(answered): its own TLS connection to the server failed")
            }
            return FlowFailure(
                mode: .clientCertRequired,
                evidence: "\(answered); behind it the gateway refused a TLS handshake, for want of a client certificate: "
                    + "a TLS-inspecting proxy terminates the app's TLS and cannot carry the app's certificate (this client "
                    + "holds one)",
                advice: "Exempt the Appian server's host from TLS inspection (Squid: ssl_bump splice for it), so the app's "
                    + "own TLS, with its client certificate, reaches the gateway.")
        }
        if Self.squidUnreachableErrors.contains(code) {
            return FlowFailure(mode: .transportFailure, evidence: "\(answered): it could not reach the server")
        }
        return FlowFailure(mode: .foreignResponse, evidence: "\(answered): it answered itself")
    }

    /// The line of a Squid error page that says what failed, tags removed
    /// (`Failed to establish a secure connection: error:0A000410:…`), when there is one.
    static func squidOwnWords(_ page: String) -> String? {
        let lines = page.split(separator: "\n").map { line in
            var text = ""
            var inTag = false
            for character in line {
                if character == "<" { inTag = true } else if character == ">" { inTag = false } else if !inTag { text.append(character) }
            }
            return text.trimmingCharacters(in: .whitespaces)
        }
        guard let line = lines.first(where: { $0.hasPrefix("Failed to establish a secure connection:") })
            ?? lines.first(where: { $0.contains("(TLS code:") }) else { return nil }
        return line.count <= 200 ? line : String(line.prefix(200)) + "…"
    }
}
