import HTTP
import XCTest
@testable import AuthFlow

final class StepClassifierTests: XCTestCase {
    private let classifier = StepClassifier()

    private func request(_ method: String, _ path: String, cookie: String? = nil) -> HTTPRequestHead {
        var fields = HTTPFields()
        if let cookie { fields.append("Cookie", cookie) }
        return HTTPRequestHead(method: HTTPMethod(method), path: path, fields: fields)
    }

    private func response(_ status: Int, location: String? = nil) -> HTTPResponseHead {
        var fields = HTTPFields()
        if let location { fields.append("Location", location) }
        return HTTPResponseHead(status: HTTPStatus(status), fields: fields)
    }

    func testLabelsEveryStep() {
        let rest = request("GET", "/suite/rest/a/sites")
        XCTAssertEqual(classifier.classify(rest), .unauthenticatedRequest)
        XCTAssertEqual(classifier.classify(rest, response: response(401)), .challenge401)
        XCTAssertEqual(classifier.classify(rest, response: response(302, location: "https://gw/login")), .unauthenticatedRequest)
        let login = request("GET", "/suite?codeChallenge=abc&scheme=appian")
        XCTAssertEqual(classifier.classify(login), .loginPage)
        XCTAssertEqual(classifier.classify(login, response: response(400)), .loginPage)
        XCTAssertEqual(classifier.classify(request("GET", "/suite/?codeChallenge=abc")), .loginPage)
        let auth = request("POST", "/suite/auth")
        XCTAssertEqual(classifier.classify(auth), .credentialsPost)
        XCTAssertEqual(classifier.classify(auth, response: response(200)), .credentialsPost)
        XCTAssertEqual(classifier.classify(auth, response: response(302, location: "com.appian.tempo://h/suite?result=login&token=T")), .callbackRedirect)
        let token = request("POST", "/suite/mobileAuthTokenConsumer")
        XCTAssertEqual(classifier.classify(token), .tokenPost)
        XCTAssertEqual(classifier.classify(token, response: response(401)), .tokenPost)
        XCTAssertEqual(classifier.classify(token, response: response(200)), .bootstrap)
        let authed = request("POST", "/suite/rest/x", cookie: "JSESSIONID=s; __appianCsrfToken=c")
        XCTAssertEqual(classifier.classify(authed), .authenticatedRequest)
        XCTAssertEqual(classifier.classify(authed, response: response(200)), .authenticatedRequest)
        XCTAssertEqual(classifier.classify(authed, response: response(401)), .challenge401)
        XCTAssertEqual(classifier.classify(request("GET", "/suite/cors/ping")), .corsPing)
        XCTAssertEqual(classifier.classify(request("GET", "/suite")), .other)
        XCTAssertEqual(classifier.classify(request("GET", "/favicon.ico")), .other)
        XCTAssertEqual(classifier.classify(request("GET", "/suite/restx")), .other)
    }

    func testContextPathIsConfigurableAndAbsoluteFormWorks() {
        let custom = StepClassifier(contextPath: "/apps/")
        XCTAssertEqual(custom.classify(request("GET", "/apps/rest/x")), .unauthenticatedRequest)
        XCTAssertEqual(custom.classify(request("GET", "/suite/rest/x")), .other)
        let root = StepClassifier(contextPath: "")
        XCTAssertEqual(root.classify(request("POST", "/mobileAuthTokenConsumer"), response: response(200)), .bootstrap)
        let absolute = HTTPRequestHead(method: "POST", scheme: "https", authority: "h", path: "/suite/auth", targetForm: .absolute)
        XCTAssertEqual(classifier.classify(absolute), .credentialsPost)
    }

    func testLabelsAreStableStrings() {
        XCTAssertEqual(AuthStep.allCases.map(\.rawValue), [
            "unauthenticated-request", "challenge-401", "login-page", "credentials-post", "callback-redirect",
            "token-post", "bootstrap", "authenticated-request", "cors-ping", "other",
        ])
    }
}
