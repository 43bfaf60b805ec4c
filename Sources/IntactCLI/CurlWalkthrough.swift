import Demo

/// The sign-in flow by hand with curl, as `intact demo --keep` prints it and
/// the README shows it: a bash snippet, runnable as printed (a test runs it),
/// that plays the app and its browser step by step through the proxy.
enum CurlWalkthrough {
    /// RFC 7636 Appendix B's verifier and its S256 challenge: a fixed, checkable PKCE pair.
    static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

    /// The walk-through with this run's CA file and proxy URL filled in.
    static func text(endpoints: DemoEndpoints, contextPath: String) -> String {
        script(ca: endpoints.caCertificatePath, base: endpoints.publicOrigin + "/" + contextPath)
    }

    /// The walk-through for a CA file and a base URL (`https://HOST:PORT/suite`).
    static func script(ca: String, base: String) -> String {
        """

        # --- the sign-in flow by hand, through the proxy (bash; run the lines in order) ---
        CA=\(ca)
        BASE=\(base)

        # Steps 1-3: a protected resource without a session -> 401 with contextUrl and tokenUrl
        curl -sS --cacert "$CA" "$BASE/rest/tempo/feed"; echo

        # Step 5: the app's PKCE pair (RFC 7636's example: CHALLENGE = base64url(SHA-256(VERIFIER)))
        VERIFIER=\(verifier)
        CHALLENGE=\(challenge)

        # Step 6: the browser opens the login URL -> the sign-in form and a login-transaction cookie
        curl -sS --cacert "$CA" -c browser.txt -o login.html "$BASE?codeChallenge=$CHALLENGE&scheme=com.appian.tempo"
        CSRF=$(sed -n 's/.*name="csrf" value="\\([^"]*\\)".*/\\1/p' login.html)

        # Steps 6b-7: the browser posts the credentials -> 302 to com.appian.tempo://...?result=login&token=...
        TOKEN=$(curl -sS --cacert "$CA" -b browser.txt -o /dev/null -D - --data-urlencode "csrf=$CSRF" \\
          -d un=demo -d pw=intact-demo "$BASE/auth" | tr -d '\\r' | sed -n 's/^[Ll]ocation: .*[?&]token=\\([^&]*\\).*/\\1/p')
        echo "token: $TOKEN"

        # Steps 9-11: the app posts the token and the verifier -> 200 bootstrap and three session cookies
        curl -sS --cacert "$CA" -c app.txt -d "token=$TOKEN" -d "codeVerifier=$VERIFIER" "$BASE/mobileAuthTokenConsumer"; echo

        # After sign-in: the protected resource again, with the app's session cookies -> 200
        curl -sS --cacert "$CA" -b app.txt "$BASE/rest/tempo/feed"; echo
        # --- end of the walk-through ---

        """
    }
}
