import XCTest
@testable import Browser

/// The command line and the profile's preferences, as text.
final class ChromiumSettingsTests: XCTestCase {
    func testMappedNamesComeBeforeTheRuleThatResolvesNothing() {
        var settings = ChromiumSettings(executable: "/usr/bin/chromium")
        settings.hostMappings = ["MAP intact-hsts.test:8443 127.0.0.1"]
        let arguments = settings.arguments(profile: "/tmp/p", runningAsRoot: false)
        XCTAssertTrue(arguments.contains(
            "--host-resolver-rules=MAP intact-hsts.test:8443 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"), "\(arguments)")
        XCTAssertTrue(ChromiumSettings(executable: "c").arguments(profile: "/tmp/p", runningAsRoot: false)
            .contains("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"))
    }

    func testTheClientCertificateIsPickedForTheRunsOriginsOnly() {
        let certificate = ChromiumClientCertificate(pkcs12: [1], password: "p", issuerCommonName: "intact demo CA",
                                                    origins: ["https://127.0.0.1:8443"])
        XCTAssertEqual(String(decoding: ChromiumProfile.preferences(certificate), as: UTF8.self),
                       #"{"profile":{"content_settings":{"exceptions":{"auto_select_certificate":{"https://127.0.0.1:8443,*":"#
                       + #"{"setting":{"filters":[{"ISSUER":{"CN":"intact demo CA"}}]}}}}}}}"#)
        var anyIssuer = certificate
        anyIssuer.issuerCommonName = nil
        XCTAssertTrue(String(decoding: ChromiumProfile.preferences(anyIssuer), as: UTF8.self).contains(#""filters":[{}]"#))
    }
}
