import Foundation
import Glibc
import Hashing
import HTTP
import XCTest
@testable import Evidence

/// Keyed digests of secrets in fields, targets and form bodies, and the digest key file.
final class RedactionPolicyTests: XCTestCase {
    private let digester = SecretDigester(key: [UInt8](repeating: 1, count: 32))
    private var policy: RedactionPolicy { RedactionPolicy(digester: digester) }

    private func digest(_ text: String) -> String { digester.digest(Array(text.utf8)) }

    func testSecretQueryParametersAreDigestedAndCodeChallengeStaysVisible() {
        let target = "/suite/auth?token=T0K&codeChallenge=CH&code=C&codeVerifier=V&pw=p%40ss&password=x&csrf=z&next=%2Fhome"
        XCTAssertEqual(policy.recordTarget(target),
                       "/suite/auth?token=\(digest("T0K"))&codeChallenge=CH&code=\(digest("C"))&codeVerifier=\(digest("V"))"
                       + "&pw=\(digest("p%40ss"))&password=\(digest("x"))&csrf=\(digest("z"))&next=%2Fhome")
        XCTAssertEqual(policy.recordTarget("/suite/x?TOKEN=a&p%61ssword=b&flag&=v&token"),
                       "/suite/x?TOKEN=\(digest("a"))&p%61ssword=\(digest("b"))&flag&=v&token",
                       "names match case-insensitively and percent-decoded; pairs without '=' are kept")
        XCTAssertEqual(policy.recordTarget("/suite/x?a=1&b=2"), "/suite/x?a=1&b=2")
        XCTAssertEqual(policy.recordTarget("/no-query"), "/no-query")
        XCTAssertEqual(RedactionPolicy(recordSecrets: true, digester: digester).recordTarget("/x?token=a"), "/x?token=a")
        XCTAssertEqual(RedactionPolicy(extraSecretNames: ["sessionKey"], digester: digester).recordTarget("/x?sessionkey=k"),
                       "/x?sessionkey=\(digest("k"))", "--secret-name adds a parameter name")
    }

    func testOnlyTheSecretNamesAreSecretWhateverTheirCase() {
        let secret = ["cookie", "Cookie", "COOKIE", "set-cookie", "Set-Cookie", "authorization", "Authorization",
                      "proxy-authorization", "Proxy-Authorization", "pRoXy-AuThOrIzAtIoN"]
        // Names as long as a secret one, differing in one byte; and the usual ones.
        let publicNames = ["cookiE2", "cookies", "cooki", "c", "", "server", "cookid", "cookie ", "set-cookie2",
                           "set_cookie", "sat-cookie", "user-agent", "last-modified", "cache-control",
                           "authorizatioN1", "authorizatiom", "proxy-authenticate", "proxy-authorizatio",
                           "proxy-authorization-", "xroxy-authorization", "content-type",
                           String(repeating: "a", count: 63), String(repeating: "a", count: 64),
                           String(repeating: "a", count: 200)]
        for name in secret {
            XCTAssertTrue(policy.isSecret(name), name)
            XCTAssertTrue(policy.record(HTTPField(name: name, value: "v")).isRedacted, name)
        }
        for name in publicNames {
            XCTAssertFalse(policy.isSecret(name), name)
            XCTAssertEqual(policy.record(HTTPField(name: name, value: "v")), RecordedField(name: name, value: "v"), name)
        }
        let extra = RedactionPolicy(extraSecretNames: ["X-Api-Key", String(repeating: "k", count: 80)], digester: digester)
        XCTAssertTrue(extra.isSecret("x-api-key"))
        XCTAssertTrue(extra.isSecret(String(repeating: "K", count: 80)))
        XCTAssertTrue(extra.isSecret("Cookie"))
        XCTAssertFalse(extra.isSecret("x-api-kez"))
    }

    func testAFieldSectionIsRecordedInOrderWithItsSecretsDigested() {
        let fields: HTTPFields = ["Host": "a", "Cookie": "k=v", "server": "s", "Authorization": "Basic x"]
        let recorded = policy.record(fields)
        XCTAssertEqual(recorded.map(\.name), ["Host", "Cookie", "server", "Authorization"])
        XCTAssertEqual(recorded.map(\.isRedacted), [false, true, false, true])
        XCTAssertEqual(recorded[0].value, "a")
        XCTAssertEqual(recorded[1].value, digest("k=v"))
        XCTAssertEqual(recorded[3].value, digest("Basic x"))
        XCTAssertEqual(policy.record(HTTPFields()), [])
    }

    /// The section's bulk path gives what `record(_:)` gives field by
    /// field, whatever the policy: secrets recorded in clear, extra names,
    /// names of a secret name's length that are none, every secret's case.
    func testASectionIsRecordedAsItsFieldsOneByOne() {
        let names = ["Host", "Cookie", "server", "COOKIE", "cookiE2", "Set-Cookie", "user-agent", "set-cookie",
                     "authorization", "last-modified", "accept-ranges", "Proxy-Authorization", "proxy-authenticate1",
                     "X-Api-Key", "x-api-kez", "", "é-name", String(repeating: "a", count: 80)]
        let fields = HTTPFields(names.enumerated().map { HTTPField(name: $0.element, value: "k=v\($0.offset); a=b") })
        let policies = [policy, RedactionPolicy(recordSecrets: true, digester: digester),
                        RedactionPolicy(extraSecretNames: ["x-api-key"], digester: digester),
                        RedactionPolicy(recordSecrets: true, extraSecretNames: ["x-api-key"], digester: digester)]
        for policy in policies {
            XCTAssertEqual(policy.record(fields), fields.fields.map(policy.record), "recordSecrets \(policy.recordSecrets)")
        }
        XCTAssertEqual(policies[2].record(fields).filter(\.isRedacted).map(\.name),
                       ["Cookie", "COOKIE", "Set-Cookie", "set-cookie", "authorization", "Proxy-Authorization", "X-Api-Key"])
    }

    /// The one default secret name of each length is each of the literals, and no other length has one.
    func testEveryDefaultSecretNameIsFoundByItsLength() {
        let literals = RedactionPolicy.defaultSecretNameLiterals
        XCTAssertEqual(Set(literals.map(\.description)), RedactionPolicy.defaultSecretNames)
        for length in 0..<100 {
            let named = literals.filter { $0.utf8CodeUnitCount == length }
            XCTAssertLessThanOrEqual(named.count, 1, "two default secret names of \(length) bytes")
            XCTAssertEqual(RedactionPolicy.defaultSecretName(ofLength: length)?.description, named.first?.description,
                           "length \(length)")
        }
    }

    func testFormBodiesAreRedactedOtherBodiesKept() throws {
        let form = StoredBody(base64: Data("un=alice&pw=hunter2&csrf=abc".utf8).base64EncodedString(), truncated: false)
        let recorded = try XCTUnwrap(policy.recordBody(form, contentType: "application/x-www-form-urlencoded; charset=UTF-8"))
        XCTAssertEqual(String(decoding: try XCTUnwrap(recorded.bytes), as: UTF8.self),
                       "un=alice&pw=\(digest("hunter2"))&csrf=\(digest("abc"))")
        XCTAssertEqual(policy.recordBody(form, contentType: "text/plain"), form)
        XCTAssertEqual(policy.recordBody(form, contentType: nil), form)
        XCTAssertEqual(RedactionPolicy(recordSecrets: true, digester: digester)
            .recordBody(form, contentType: "application/x-www-form-urlencoded"), form)
        let json = StoredBody(base64: Data(#"{"token": "t\"1", "user":{"Password":"p"},"codeChallenge":"c","code":7}"#.utf8)
            .base64EncodedString(), truncated: false)
        let recordedJSON = try XCTUnwrap(policy.recordBody(json, contentType: "application/json; charset=utf-8")?.bytes)
        XCTAssertEqual(String(decoding: recordedJSON, as: UTF8.self),
                       #"{"token": ""# + digest(#"t\"1"#) + #"", "user":{"Password":""# + digest("p")
                       + #""},"codeChallenge":"c","code":7}"#, "string members with secret names, at any depth")
        XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(recordedJSON)))
        let cutJSON = StoredBody(base64: Data(#"{"pw":"abc"#.utf8).base64EncodedString(), truncated: true)
        XCTAssertEqual(policy.recordBody(cutJSON, contentType: "application/json"), cutJSON,
                       "an unterminated value is left as it is (the body was cut inside it)")
        let truncated = StoredBody(base64: Data("token=abcd".utf8).base64EncodedString(), truncated: true)
        XCTAssertEqual(policy.recordBody(truncated, contentType: "application/x-www-form-urlencoded")?.truncated, true)
    }

    func testRequestRecordCarriesTheRedactedTargetAndBody() throws {
        let head = HTTPRequestHead(method: "POST", authority: "app.test", path: "/suite/mobileAuthTokenConsumer?token=abc",
                                   fields: ["Content-Type": "application/x-www-form-urlencoded", "Cookie": "a=b"])
        let body = StoredBody(base64: Data("token=abc&codeVerifier=v".utf8).base64EncodedString(), truncated: false)
        let message = RecordedMessage(request: head, connectionScheme: "https",
                                      digest: MessageDigest(head: HeadDigest(request: head, wire: .http1(head: []), connectionScheme: "https",
                                                                             using: .sha256)),
                                      body: body, timings: MessageTimings(), redaction: policy)
        XCTAssertEqual(message.path, "/suite/mobileAuthTokenConsumer?token=\(digest("abc"))")
        XCTAssertEqual(message.body?.bytes.map { String(decoding: $0, as: UTF8.self) },
                       "token=\(digest("abc"))&codeVerifier=\(digest("v"))")
        XCTAssertEqual(message.firstValue("cookie"), digest("a=b"))
        let line = String(decoding: ExchangeRecord(exchangeID: "e", tap: "t", legs: [
            ExchangeRecord.Leg(role: .client, connectionID: "c", request: message)]).jsonLine(), as: UTF8.self)
        XCTAssertFalse(line.contains("abc"))
    }

    func testHeaderNamesTheKeyAndReadsBack() throws {
        XCTAssertEqual(policy.digestKey, digester.fingerprint)
        XCTAssertNil(RedactionPolicy(recordSecrets: true, digester: digester).digestKey)
        let data = try JSONEncoder().encode(policy)
        XCTAssertFalse(String(decoding: data, as: UTF8.self).contains(Encoding.hex([UInt8](repeating: 1, count: 32))))
        XCTAssertEqual(try JSONDecoder().decode(RedactionPolicy.self, from: data), policy)
        let old = try JSONDecoder().decode(RedactionPolicy.self, from: Data(#"{"recordSecrets":false,"extraSecretNames":[]}"#.utf8))
        XCTAssertNil(old.digestKey, "a header from before keyed digests still reads")
    }

    // MARK: The key file

    private func keyPath() -> String { temporaryPath("digest-key") }

    func testKeyFileIsCreatedPrivateAndReusedAcrossLoads() throws {
        let path = keyPath()
        let (first, created) = try DigestKeyFile.loadOrCreate(at: path)
        XCTAssertTrue(created)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        XCTAssertEqual(attributes[.posixPermissions] as? Int, 0o600)
        XCTAssertEqual(attributes[.size] as? Int, 32)
        let (second, createdAgain) = try DigestKeyFile.loadOrCreate(at: path)
        XCTAssertFalse(createdAgain)
        XCTAssertEqual(first.fingerprint, second.fingerprint)
        XCTAssertEqual(first.digest(Array("s".utf8)), second.digest(Array("s".utf8)))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: (path as NSString).deletingLastPathComponent),
                       ["digest-key"], "no temporary file left behind")
    }

    func testKeyFileReadableByOthersIsRefusedWithTheReason() throws {
        let path = keyPath()
        _ = try DigestKeyFile.loadOrCreate(at: path)
        chmod(path, 0o644)
        XCTAssertThrowsError(try DigestKeyFile.loadOrCreate(at: path)) { error in
            XCTAssertEqual((error as? DigestKeyError)?.problem, .readableByOthers(mode: 0o644))
            XCTAssertTrue("\(error)".contains("chmod 600 \(path)"), "\(error)")
        }
    }

    func testKeyFileOfTheWrongLengthIsRefusedWithTheReason() throws {
        let path = keyPath()
        for bytes in [[UInt8](), [UInt8](repeating: 9, count: 31), [UInt8](repeating: 9, count: 64)] {
            unlink(path)
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]))
            XCTAssertThrowsError(try DigestKeyFile.loadOrCreate(at: path)) { error in
                XCTAssertEqual((error as? DigestKeyError)?.problem, .wrongLength(bytes.count))
                XCTAssertTrue("\(error)".contains("exactly 32"), "\(error)")
            }
        }
    }

    func testKeyPathThatIsADirectoryIsRefused() throws {
        let directory = (keyPath() as NSString).deletingLastPathComponent
        XCTAssertThrowsError(try DigestKeyFile.load(at: directory)) { error in
            XCTAssertEqual((error as? DigestKeyError)?.problem, .notARegularFile)
        }
        XCTAssertThrowsError(try DigestKeyFile.load(at: directory + "/missing")) { error in
            guard case .cannotRead? = (error as? DigestKeyError)?.problem else { return XCTFail("\(error)") }
        }
    }
}
