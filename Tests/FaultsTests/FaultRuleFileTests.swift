import ConfigurationFile
import Foundation
import AuthFlow
import HTTP
import XCTest
@testable import Faults

final class FaultRuleFileTests: XCTestCase {
    private func parseError(_ json: String, file: StaticString = #filePath, line: UInt = #line) -> FaultRuleError? {
        do {
            let rules = try FaultRuleFile.parse(Array(json.utf8), file: "test.json")
            XCTFail("parsed \(rules.count) rules, expected an error", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    func testParsesEveryMatchKind() throws {
        let rules = try FaultRuleFile.parse(Array("""
        {"rules": [
          {"name": "all", "match": {"leg": "response", "step": ["bootstrap", "token-post"], "method": "post",
            "path": "/suite/**", "present": ["Set-Cookie"], "absent": "X-Seen", "status": [200, 201],
            "probability": 0.25, "times": 3},
           "actions": [{"action": "fold-set-cookie"}]},
          {"name": "regex", "match": {"leg": "request", "step": "login-page", "pathRegex": "codeChallenge="},
           "actions": [{"action": "remove-header", "name": "X"}]}
        ]}
        """.utf8))
        XCTAssertEqual(rules.count, 2)
        let m = rules[0].match
        XCTAssertEqual(m.leg, .response)
        XCTAssertEqual(m.steps, [.bootstrap, .tokenPost])
        XCTAssertEqual(m.methods, ["POST"])
        XCTAssertEqual(m.path, .glob("/suite/**"))
        XCTAssertEqual(m.present, ["Set-Cookie"])
        XCTAssertEqual(m.absent, ["X-Seen"])
        XCTAssertEqual(m.statuses, [200, 201])
        XCTAssertEqual(m.probability, 0.25)
        XCTAssertEqual(m.times, 3)
        guard case .regex(let regex) = rules[1].match.path else { return XCTFail("expected a regex path") }
        XCTAssertEqual(regex.pattern, "codeChallenge=")
    }

    func testParsesEveryAction() throws {
        let rules = try FaultRuleFile.parse(Array("""
        {"rules": [
          {"name": "req", "match": {"leg": "request"}, "actions": [
            {"action": "remove-header", "name": "A"},
            {"action": "add-header", "name": "B", "value": "1"},
            {"action": "set-header", "name": "C", "value": "2"},
            {"action": "rename-header", "name": "D", "to": "d"},
            {"action": "header-case", "style": "title"},
            {"action": "remove-cookie", "cookie": "s"},
            {"action": "rewrite-cookie", "cookie": "s", "value": "v"},
            {"action": "replace-body", "body": "x", "contentType": "text/plain"},
            {"action": "regex-body", "pattern": "a+", "template": "b"},
            {"action": "truncate-body", "bytes": 0},
            {"action": "gzip-body"},
            {"action": "rechunk-body", "bytes": 7},
            {"action": "regex-target", "pattern": "x", "template": "y"},
            {"action": "rewrite-urls", "host": "i.test", "in": ["target", "body"]},
            {"action": "gate", "header": "Authorization", "status": 401},
            {"action": "delay", "ms": 5, "jitter": 2},
            {"action": "throttle", "bytesPerSecond": 100},
            {"action": "reset", "at": "after-body-bytes", "bytes": 9},
            {"action": "close"},
            {"action": "stall"},
            {"action": "answer", "status": 503, "headers": [["Retry-After", "1"]], "body": "down"}
          ]},
          {"name": "resp", "match": {"leg": "response"}, "actions": [
            {"action": "remove-set-cookie"},
            {"action": "rewrite-set-cookie", "cookie": "JSESSIONID", "path": "/", "secure": false, "httpOnly": true, "sameSite": null},
            {"action": "fold-set-cookie"},
            {"action": "add-set-cookie", "value": "lb=1"},
            {"action": "set-status", "status": 302, "location": "https://gw.test/"},
            {"action": "rewrite-urls", "scheme": "http", "pathFrom": "/a", "pathTo": "/b", "onlyHost": "app.test"},
            {"action": "reset", "at": "before-headers"},
            {"action": "reset", "at": "after-headers"}
          ]},
          {"name": "req2", "match": {"leg": "request"}, "actions": [
            {"action": "gate", "cookie": "GW", "location": "https://gw.test/login"}
          ]},
          {"name": "tls", "match": {"times": 2}, "actions": [
            {"action": "require-client-certificate", "caFile": "ca.pem"},
            {"action": "unknown-ca-certificate"}
          ]}
        ]}
        """.utf8))
        XCTAssertEqual(rules[0].actions.map(\.kind), [
            .removeHeader, .addHeader, .setHeader, .renameHeader, .headerCase, .removeCookie, .rewriteCookie,
            .replaceBody, .regexBody, .truncateBody, .gzipBody, .rechunkBody, .regexTarget, .rewriteURLs, .gate,
            .delay, .throttle, .reset, .close, .stall, .answer,
        ])
        XCTAssertEqual(rules[0].actions[13], .rewriteURLs(URLRewrite(host: "i.test"), places: [.target, .body]))
        XCTAssertEqual(rules[0].actions[14], .gate(Gate(requirement: .header("Authorization"), denial: .status(401))))
        XCTAssertEqual(rules[0].actions[15], .delay(milliseconds: 5, jitter: 2))
        XCTAssertEqual(rules[0].actions[17], .reset(.afterBodyBytes(9)))
        XCTAssertEqual(rules[0].actions[20], .answer(CannedResponse(status: 503, fields: ["Retry-After": "1"], body: Array("down".utf8))))
        XCTAssertEqual(rules[1].actions[1], .rewriteSetCookie(cookie: "JSESSIONID", edit: SetCookieEdit(attributes: [
            ("Path", .set("/")), ("Secure", .remove), ("HttpOnly", .set(nil)), ("SameSite", .remove),
        ])))
        XCTAssertEqual(rules[1].actions[5], .rewriteURLs(URLRewrite(scheme: "http", pathFrom: "/a", pathTo: "/b", onlyHost: "app.test"),
                                                         places: [.location, .body]))
        XCTAssertEqual(rules[1].actions[6], .reset(.beforeHeaders))
        XCTAssertEqual(rules[2].actions[0], .gate(Gate(requirement: .cookie("GW"), denial: .redirect(location: "https://gw.test/login"))))
        XCTAssertTrue(rules[3].isConnectionRule)
        XCTAssertEqual(rules[3].actions, [.requireClientCertificate(caFile: "ca.pem"), .presentUnknownCA])
        // Every action kind appears in this file.
        XCTAssertEqual(Set(rules.flatMap { $0.actions.map(\.kind) }), Set(FaultActionKind.allCases))
    }

    func testSyntaxErrorNamesLineAndColumn() throws {
        let e = try XCTUnwrap(parseError("{\"rules\": [\n  {\"name\": \"a\",, }\n]}"))
        XCTAssertEqual(e.position, SourcePosition(line: 2, column: 16))
        guard case .syntax(let message) = e.kind else { return XCTFail("\(e)") }
        XCTAssertTrue(message.contains("expected a field name"), message)
        XCTAssertTrue(e.description.hasPrefix("test.json:2:16:"), e.description)

        let unclosed = try XCTUnwrap(parseError("{\"rules\": [\n{\"name\": \"ab"))
        XCTAssertEqual(unclosed.position, SourcePosition(line: 2, column: 10))
        XCTAssertEqual(unclosed.kind, .syntax("string not closed"))
        let newline = try XCTUnwrap(parseError("{\"rules\": [\n{\"name\": \"ab\n"))
        XCTAssertEqual(newline.position, SourcePosition(line: 2, column: 13))
        let trailing = try XCTUnwrap(parseError("{\"rules\": []} x"))
        XCTAssertEqual(trailing.position, SourcePosition(line: 1, column: 15))
        let number = try XCTUnwrap(parseError("{\"rules\": [01]}"))
        XCTAssertEqual(number.kind, .syntax("numbers cannot have leading zeros"))
        let duplicate = try XCTUnwrap(parseError("{\"rules\": [], \"rules\": []}"))
        XCTAssertEqual(duplicate.position, SourcePosition(line: 1, column: 15))
        // Columns count characters, not bytes.
        let unicode = try XCTUnwrap(parseError("{\"rules\": [{\"name\": \"é\" x"))
        XCTAssertEqual(unicode.position, SourcePosition(line: 1, column: 25))
    }

    func testUnknownFieldNamesRulePathLineAndAllowedFields() throws {
        let e = try XCTUnwrap(parseError("""
        {"rules": [
          {"name": "ok", "match": {"leg": "request"}, "actions": [{"action": "close"}]},
          {"name": "strip",
           "match": {"leg": "response", "lge": "x"},
           "actions": [{"action": "close"}]}
        ]}
        """))
        XCTAssertEqual(e.kind, .unknownField("lge", allowed: ["leg", "step", "method", "path", "pathRegex", "present", "absent", "status", "probability", "times"]))
        XCTAssertEqual(e.context, RuleReference(index: 1, name: "strip").description)
        XCTAssertEqual(e.path, "rules[1].match")
        XCTAssertEqual(e.position, SourcePosition(line: 4, column: 33))
        XCTAssertTrue(e.description.contains("rule 2 (\"strip\") at rules[1].match: unknown field \"lge\""), e.description)
    }

    func testUnknownActionFieldListsThatActionsFields() throws {
        let e = try XCTUnwrap(parseError("""
        {"rules": [{"name": "t", "match": {"leg": "response"},
          "actions": [{"action": "truncate-body", "byte": 3}]}]}
        """))
        XCTAssertEqual(e.kind, .unknownField("byte", allowed: ["action", "bytes"]))
        XCTAssertEqual(e.path, "rules[0].actions[0]")
        XCTAssertEqual(e.position?.line, 2)
    }

    func testRegexThatDoesNotCompileNamesRulePatternAndReason() throws {
        let e = try XCTUnwrap(parseError("""
        {"rules": [{"name": "bad-regex", "match": {"leg": "request", "pathRegex": "a(b"},
          "actions": [{"action": "close"}]}]}
        """))
        guard case .invalidRegex(let pattern, let reason) = e.kind else { return XCTFail("\(e)") }
        XCTAssertEqual(pattern, "a(b")
        XCTAssertTrue(reason.contains("NSRegularExpression"), reason)
        XCTAssertTrue(reason.contains("expected ')'"), reason)
        XCTAssertEqual(e.context, "rule 1 (\"bad-regex\")")
        XCTAssertEqual(e.path, "rules[0].match.pathRegex")
        XCTAssertEqual(e.position, SourcePosition(line: 1, column: 75))

        let body = try XCTUnwrap(parseError("""
        {"rules": [{"name": "b", "match": {"leg": "request"}, "actions": [{"action": "regex-body", "pattern": "[z-a]", "template": ""}]}]}
        """))
        XCTAssertEqual(body.path, "rules[0].actions[0].pattern")
    }

    func testOutOfRangeValues() throws {
        func expectRange(_ match: String, _ path: String, line: UInt = #line) throws {
            let e = try XCTUnwrap(parseError("{\"rules\": [{\"name\": \"r\", \"match\": {\"leg\": \"response\", \(match)}, \"actions\": [{\"action\": \"close\"}]}]}"), line: line)
            guard case .outOfRange = e.kind else { return XCTFail("\(e)", line: line) }
            XCTAssertEqual(e.path, path, line: line)
        }
        try expectRange("\"probability\": 1.5", "rules[0].match.probability")
        try expectRange("\"times\": 0", "rules[0].match.times")
        try expectRange("\"status\": [200, 99]", "rules[0].match.status[1]")
        let delay = try XCTUnwrap(parseError("{\"rules\": [{\"name\": \"r\", \"match\": {\"leg\": \"response\"}, \"actions\": [{\"action\": \"rechunk-body\", \"bytes\": 0}]}]}"))
        XCTAssertEqual(delay.kind, .outOfRange("0", allowed: "1…"))
    }

    func testUnknownValuesListTheAllowedOnes() throws {
        let leg = try XCTUnwrap(parseError("{\"rules\": [{\"name\": \"r\", \"match\": {\"leg\": \"both\"}, \"actions\": []}]}"))
        XCTAssertEqual(leg.kind, .unknownValue("both", allowed: ["request", "response"]))
        let action = try XCTUnwrap(parseError("{\"rules\": [{\"name\": \"r\", \"match\": {\"leg\": \"request\"}, \"actions\": [{\"action\": \"explode\"}]}]}"))
        guard case .unknownValue("explode", let allowed) = action.kind else { return XCTFail("\(action)") }
        XCTAssertEqual(allowed, FaultActionKind.allCases.map(\.rawValue))
        let step = try XCTUnwrap(parseError("{\"rules\": [{\"name\": \"r\", \"match\": {\"leg\": \"request\", \"step\": [\"login\"]}, \"actions\": []}]}"))
        XCTAssertEqual(step.kind, .unknownValue("login", allowed: AuthStep.allCases.map(\.rawValue)))
    }

    func testWrongTypesAndMissingFields() throws {
        let times = try XCTUnwrap(parseError("{\"rules\": [{\"name\": \"r\", \"match\": {\"leg\": \"request\", \"times\": \"3\"}, \"actions\": []}]}"))
        XCTAssertEqual(times.kind, .wrongType(expected: "an integer", found: "a string"))
        let missing = try XCTUnwrap(parseError("{\"rules\": [{\"match\": {\"leg\": \"request\"}, \"actions\": []}]}"))
        XCTAssertEqual(missing.kind, .missingField("name"))
        XCTAssertEqual(missing.context, "rule 1")
        let value = try XCTUnwrap(parseError("{\"rules\": [{\"name\": \"r\", \"match\": {\"leg\": \"request\"}, \"actions\": [{\"action\": \"add-header\", \"name\": \"X\"}]}]}"))
        XCTAssertEqual(value.kind, .missingField("value"))
        XCTAssertEqual(value.path, "rules[0].actions[0]")
        let top = try XCTUnwrap(parseError("[]"))
        XCTAssertEqual(top.kind, .wrongType(expected: "an object", found: "an array"))
    }

    func testInconsistentRulesAreRefused() throws {
        func inconsistent(_ rule: String, _ path: String, line: UInt = #line) throws {
            let e = try XCTUnwrap(parseError("{\"rules\": [\(rule)]}"), line: line)
            guard case .inconsistent = e.kind else { return XCTFail("\(e)", line: line) }
            XCTAssertEqual(e.path, path, line: line)
        }
        try inconsistent(#"{"name": "r", "match": {"leg": "request", "status": 401}, "actions": [{"action": "close"}]}"#, "rules[0].match")
        try inconsistent(#"{"name": "r", "match": {"leg": "request"}, "actions": [{"action": "close"}, {"action": "set-status", "status": 302}]}"#, "rules[0].actions[1]")
        try inconsistent(#"{"name": "r", "match": {"leg": "response"}, "actions": [{"action": "unknown-ca-certificate"}]}"#, "rules[0].actions[0]")
        try inconsistent(#"{"name": "r", "match": {"path": "/x"}, "actions": [{"action": "unknown-ca-certificate"}]}"#, "rules[0].match")
        try inconsistent(#"{"name": "r", "match": {}, "actions": [{"action": "close"}]}"#, "rules[0].actions[0]")
        try inconsistent(#"{"name": "r", "match": {"leg": "request"}, "actions": []}"#, "rules[0].actions")
        try inconsistent(#"{"name": "r", "match": {"leg": "response"}, "actions": [{"action": "rewrite-urls", "host": "h", "in": ["target"]}]}"#, "rules[0].actions[0]")
        try inconsistent(#"{"name": "r", "match": {"leg": "request", "path": "/a", "pathRegex": "b"}, "actions": [{"action": "close"}]}"#, "rules[0].match.pathRegex")
        try inconsistent(#"{"name": "r", "match": {"leg": "request"}, "actions": [{"action": "reset", "at": "after-headers", "bytes": 3}]}"#, "rules[0].actions[0].bytes")
        try inconsistent(#"{"name": "r", "match": {"leg": "request"}, "actions": [{"action": "gate", "cookie": "a", "header": "b", "location": "x"}]}"#, "rules[0].actions[0].header")
        try inconsistent(#"{"name": "r", "match": {"leg": "request"}, "actions": [{"action": "close"}]}, {"name": "r", "match": {"leg": "request"}, "actions": [{"action": "close"}]}"#, "rules[1].name")
    }

    func testExampleFilesParse() throws {
        let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Examples/faults").standardized
        let files = try FileManager.default.contentsOfDirectory(atPath: examples.path).filter { $0.hasSuffix(".json") }.sorted()
        XCTAssertEqual(files, ["bodies.json", "browser.json", "cookies.json", "gateway.json", "network.json", "tls.json", "urls.json"])
        var kinds = Set<FaultActionKind>()
        for file in files {
            let bytes = try Array(Data(contentsOf: examples.appendingPathComponent(file)))
            do {
                let rules = try FaultRuleFile.parse(bytes, file: file)
                XCTAssertFalse(rules.isEmpty, file)
                for rule in rules { kinds.formUnion(rule.actions.map(\.kind)) }
            } catch {
                XCTFail("\(error)")
            }
        }
        // The examples show every action at least once.
        XCTAssertEqual(kinds, Set(FaultActionKind.allCases))
    }
}
