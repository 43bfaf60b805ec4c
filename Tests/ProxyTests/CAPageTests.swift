import Evidence
import HTTP
import TLS
import XCTest
@testable import Proxy

/// The CA page as a local site: which forward-mode requests it answers (with
/// no upstream ever opened), what it answers, and how the exchange is recorded.
final class CAPageTests: XCTestCase {
    static let authority: CertificateAuthority = {
        var template = Array("/tmp/intact-capage-XXXXXX".utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        return try! CertificateAuthority.create(in: directory + "/ca")
    }()

    func layer(site: Bool = true) throws -> DownstreamLayer {
        var settings = ProxyLayerSettings(mode: .forward, loopGuard: DownstreamLayerTests.guardAt8080,
                                          recording: Script.settings)
        if site { settings.localSite = try CAPage(authority: Self.authority) }
        return DownstreamLayer(id: Script.client, localIP: "127.0.0.1", settings: settings)
    }

    func absolute(_ authority: String, path: String = "/", scheme: String = "http", method: String = "GET") -> HTTPRequestHead {
        HTTPRequestHead(method: HTTPMethod(method), scheme: scheme, authority: authority, path: path, targetForm: .absolute,
                        fields: ["Host": authority])
    }

    /// Sends `head` (and its end) through a fresh layer; the commands (each response head answered as sent).
    func run(_ head: HTTPRequestHead, site: Bool = true) throws -> [DownstreamCommand] {
        var layer = try layer(site: site)
        _ = layer.start()
        var commands = layer.handle(.requestHead(
            Script.exchange(1), head, wire: Script.wire(head), streamID: nil, bodyFraming: .none))
        commands += layer.handle(.exchange(Script.exchange(1), .requestEnd(trailers: nil)))
        return commands
    }

    func response(_ commands: [DownstreamCommand]) -> (head: HTTPResponseHead?, body: [UInt8]) {
        var head: HTTPResponseHead?
        var body: [UInt8] = []
        for case .exchange(_, .sendResponse(let part)) in commands {
            switch part {
            case .head(let sent): head = sent
            case .body(let bytes): body += bytes
            case .end: break
            }
        }
        return (head, body)
    }

    func opensUpstream(_ commands: [DownstreamCommand]) -> Bool {
        commands.contains { if case .exchange(_, .openUpstream) = $0 { return true } else { return false } }
    }

    func testIntactProxyOriginFormAndTheProxysOwnAddressGetThePageNeverAnUpstream() throws {
        for head in [absolute("intact.proxy"), absolute("INTACT.PROXY:80", path: "/anything?x=1"),
                     Script.get("/", host: "127.0.0.1:8080"), absolute("127.0.0.1:8080"), absolute("localhost:8080")] {
            let commands = try run(head)
            XCTAssertFalse(opensUpstream(commands), "\(head.target)")
            let (sent, body) = response(commands)
            XCTAssertEqual(sent?.status, head.pathOnly == "/" ? 200 : 404, "\(head.target)")
            XCTAssertEqual(sent?.fields["Content-Type"], "text/html; charset=utf-8")
            XCTAssertEqual(sent?.fields["Proxy-Status"], "intact; details=\"answered by the proxy: CA page\"")
            let html = String(decoding: body, as: UTF8.self)
            XCTAssertTrue(html.contains(CAPage.colonHex(Self.authority.sha256Fingerprint)), html)
            for section in ["id=\"android\"", "id=\"ios\"", "id=\"macos\"", "id=\"windows\"", "id=\"linux\"", "id=\"firefox\""] {
                XCTAssertTrue(html.contains(section), section)
            }
            // Self-contained: nothing is loaded from elsewhere.
            for forbidden in ["<script", "<link", "<img", "src=\"", "url(", "http://", "https://"] {
                XCTAssertFalse(html.contains(forbidden), forbidden)
            }
            // Recorded as a local exchange: the downstream leg only, no error.
            let record = try XCTUnwrap(commands.compactMap { command -> ExchangeRecord? in
                if case .exchange(_, .finished(let record)) = command { return record }
                return nil
            }.first)
            XCTAssertEqual(record.legs.map(\.role), [.downstream])
            XCTAssertNil(record.error)
            XCTAssertEqual(record.leg(.downstream)?.response?.status, sent?.status.code)
        }
    }

    func testEachDownloadIsTheExportWithItsTypeAndName() throws {
        for format in CAExportFormat.allCases {
            let name = Self.authority.exportFileName(format)
            let (sent, body) = response(try run(absolute("intact.proxy", path: "/" + name)))
            XCTAssertEqual(sent?.status, 200, name)
            XCTAssertEqual(sent?.fields["Content-Type"], format.mediaType)
            XCTAssertEqual(sent?.fields["Content-Disposition"], "attachment; filename=\"\(name)\"")
            // PKCS#12 is salted afresh each time: same length, not the same bytes.
            if format == .p12 {
                XCTAssertEqual(body.count, try Self.authority.export(format).count, name)
            } else {
                XCTAssertEqual(body, try Self.authority.export(format), name)
            }
        }
        let (head, body) = response(try run(absolute("intact.proxy", path: "/intact-ca.crt", method: "HEAD")))
        XCTAssertEqual(head?.fields["Content-Length"], String(Self.authority.certificateDER.count))
        XCTAssertEqual(body, [])
        let (post, _) = response(try run(absolute("intact.proxy", method: "POST")))
        XCTAssertEqual(post?.status, 405)
        XCTAssertEqual(post?.fields["Allow"], "GET, HEAD")
    }

    func testOtherRequestsAreForwardedAndWithoutASiteNothingChanges() throws {
        XCTAssertTrue(opensUpstream(try run(absolute("example.test"))))
        XCTAssertTrue(opensUpstream(try run(absolute("127.0.0.1:9000"))))
        // HTTPS to intact.proxy is not the page (a CONNECT would be probed); plain other ports of the proxy's host are forwarded.
        XCTAssertFalse(LocalSiteAddress.isAddressed(absolute("intact.proxy", scheme: "https"),
                                                    loopGuard: DownstreamLayerTests.guardAt8080))
        // Without a site: an origin-form request is a 400, the proxy's own address a loop.
        XCTAssertEqual(response(try run(Script.get("/", host: "127.0.0.1:8080"), site: false)).head?.status, 400)
        XCTAssertEqual(response(try run(absolute("127.0.0.1:8080"), site: false)).head?.status, 502)
    }
}
