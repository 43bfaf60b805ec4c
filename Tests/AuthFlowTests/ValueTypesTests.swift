@testable import AuthFlow
import Codecs
import ConfigurationFile
import Foundation
import XCTest

/// URLs, form encoding, the login form reader and the users file.
final class ValueTypesTests: XCTestCase {
    func testAbsoluteURLParsing() throws {
        let url = try XCTUnwrap(AbsoluteURL("HTTPS://MySite.test:443/suite?x=1#frag"))
        XCTAssertEqual(url.origin.serialized, "https://mysite.test")
        XCTAssertEqual(url.path, "/suite")
        XCTAssertEqual(url.query, "x=1")
        XCTAssertEqual(url.serialized, "https://mysite.test/suite?x=1")
        XCTAssertEqual(AbsoluteURL("https://h.test")?.path, "/")
        XCTAssertEqual(AbsoluteURL("https://[::1]:8443/a")?.origin.host, "::1")
        XCTAssertEqual(AbsoluteURL("https://[::1]:8443/a")?.origin.authority, "[::1]:8443")
        XCTAssertEqual(AbsoluteURL("com.appian.tempo://h.test/suite?result=login&token=T")?.queryValue("token"), "T")
        for bad in ["/relative", "https://", "https://h:0/", "https://h:99999/", "https://u@h/", "1abc://h/", "https://h:x/"] {
            XCTAssertNil(AbsoluteURL(bad), bad)
        }
        XCTAssertTrue(Origin(scheme: "https", host: "127.0.0.1").hostIsIPAddress)
        XCTAssertFalse(Origin(scheme: "https", host: "a.b.c.d").hostIsIPAddress)
    }

    func testResolvingReferences() {
        let page = AbsoluteURL("https://h.test:8443/suite?codeChallenge=c")!
        XCTAssertEqual(page.resolving("/suite/auth")?.serialized, "https://h.test:8443/suite/auth")
        XCTAssertEqual(page.resolving("https://o.test/x?y")?.serialized, "https://o.test/x?y")
        XCTAssertNil(page.resolving("//o.test/x"))
        XCTAssertNil(page.resolving("auth"))
        XCTAssertEqual(page.appendingQuery([("scheme", "a b")]).query, "codeChallenge=c&scheme=a+b")
    }

    func testFormEncodingRoundTrip() {
        let pairs = [("un", "démo user"), ("pw", "a&b=c+%"), ("empty", "")]
        let text = FormEncoding.encode(pairs)
        XCTAssertEqual(text, "un=d%C3%A9mo+user&pw=a%26b%3Dc%2B%25&empty=")
        let decoded = FormEncoding.decode(text)
        XCTAssertEqual(decoded?.map(\.name), pairs.map(\.0))
        XCTAssertEqual(decoded?.map(\.value), pairs.map(\.1))
        XCTAssertEqual(FormEncoding.decode("flag")?.first?.value, "")
        XCTAssertNil(FormEncoding.decode("a=%zz"))
        XCTAssertNil(FormEncoding.decode("a=%4"))
        XCTAssertNil(FormEncoding.decode("a=%FF"))
    }

    func testHTMLFormReading() throws {
        let html = """
        <!-- <form action="/fake"> -->
        <meta name='intact-code-challenge' content="abc&amp;d">
        <FORM Method=post action='/suite/auth'>
          <input type="hidden" name="csrf" value="x&quot;y"/>
          <input name=un>
          <input type="password" name="pw">
          <input type="submit">
        </form>
        <input type="hidden" name="outside" value="no">
        """
        let form = try XCTUnwrap(HTMLForm(html: html))
        XCTAssertEqual(form.method, "POST")
        XCTAssertEqual(form.action, "/suite/auth")
        XCTAssertEqual(form.hiddenFields.map(\.name), ["csrf"])
        XCTAssertEqual(form.hiddenFields.first?.value, "x\"y")
        XCTAssertEqual(form.inputs.map(\.type), ["hidden", "text", "password"])
        XCTAssertEqual(HTMLForm.meta(named: "intact-code-challenge", in: html), "abc&d")
        XCTAssertNil(HTMLForm(html: "<html><body>Unauthorized</body></html>"))
        XCTAssertEqual("<a href=\"x\">&'".htmlEscaped, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;")
    }

    func testUsersFileParsingAndErrors() throws {
        let users = try MockUser.parseUsersFile(Array("""
        {"users": [{"username": "alice", "password": "pw", "locale": "de_DE", "timeZone": "Europe/Berlin"},
                   {"username": "bob", "password": "pw2", "email": "bob@x.test"}]}
        """.utf8))
        XCTAssertEqual(users.map(\.username), ["alice", "bob"])
        XCTAssertEqual(users[0].displayName, "alice")
        XCTAssertEqual(users[0].timeZone, "Europe/Berlin")
        XCTAssertEqual(users[1].email, "bob@x.test")
        XCTAssertEqual(users[1].locale, "en_US")

        func error(_ text: String) -> String? {
            do { _ = try MockUser.parseUsersFile(Array(text.utf8), file: "u.json"); return nil } catch { return error.description }
        }
        XCTAssertEqual(error("[]"), "u.json:1:1: expected an object, found an array")
        XCTAssertEqual(error("{}"), "u.json:1:1: missing field \"users\"")
        XCTAssertEqual(error(#"{"users": []}"#), "u.json:1:11: at users: the users file lists no users")
        XCTAssertEqual(error(#"{"users": [1]}"#), "u.json:1:12: at users[0]: expected an object, found a number")
        XCTAssertEqual(error(#"{"users": [{"username": "a"}]}"#), "u.json:1:12: at users[0]: missing field \"password\"")
        XCTAssertEqual(error(#"{"users": [{"username": "a", "password": 3}]}"#),
                       "u.json:1:42: at users[0].password: expected a string, found a number")
        XCTAssertEqual(error(#"{"users": [{"username": "a", "password": ""}]}"#),
                       "u.json:1:42: at users[0].password: an empty string is out of range (at least one character)")
        XCTAssertEqual(error(#"{"users": [{"username": "a", "password": "x"}, {"username": "a", "password": "y"}]}"#),
                       "u.json:1:61: at users[1].username: username \"a\" appears twice")
        XCTAssertEqual(error("{\n  \"users\": [{\"username\": \"a\", \"pasword\": \"x\"}]}"),
                       "u.json:2:31: at users[0]: unknown field \"pasword\" (allowed: username, password, displayName, email, locale, timeZone)")
        XCTAssertEqual(error("{")?.hasPrefix("u.json:1:2: not valid JSON: "), true)
        XCTAssertThrowsError(try MockUser.loadUsersFile(atPath: "/nonexistent/users.json")) { error in
            XCTAssertEqual("\(error)", "/nonexistent/users.json: cannot read: no such file or not readable")
        }
    }

    func testTokenPostFormatRoundTrip() throws {
        for encoding in [TokenPostFormat.BodyEncoding.form, .json] {
            let format = TokenPostFormat(tokenField: "tk", verifierField: "cv", encoding: encoding)
            let body = format.encode(token: "T/1", verifier: "V+2")
            let decoded = try format.decode(contentType: format.mediaType + "; charset=utf-8", body: body)
            XCTAssertEqual(decoded.token, "T/1")
            XCTAssertEqual(decoded.verifier, "V+2")
        }
        XCTAssertEqual(String(decoding: TokenPostFormat().encode(token: "t", verifier: "v"), as: UTF8.self), "token=t&codeVerifier=v")
        XCTAssertThrowsError(try TokenPostFormat(encoding: .json).decode(contentType: "application/json", body: Array("[1]".utf8))) { error in
            XCTAssertEqual(error as? TokenPostFormat.DecodeError, .malformedBody("not a JSON object"))
        }
    }
}
