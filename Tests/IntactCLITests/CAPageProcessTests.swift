import Evidence
import Foundation
import IntactTestSupport
import XCTest

/// The CA page through a running `intact proxy`: headless Chromium set to
/// use the proxy opens `http://intact.proxy/`, curl downloads the DER file
/// and opens the proxy's own address; every answer is recorded as a local
/// exchange and nothing is forwarded.
final class CAPageProcessTests: XCTestCase {
    static let chromium = "/usr/bin/chromium"

    func testChromiumAndCurlThroughTheProxyGetTheCAPageAndItsDownloads() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.chromium) else {
            return XCTFail("\(Self.chromium) is missing: run `make test-deps` (Debian package chromium)")
        }
        let directory = makeTemporaryDirectory()
        let proxy = try IntactProcess(["proxy", "--listen", "127.0.0.1:0", "--ca-dir", directory + "/ca",
                                       "--record", directory + "/run.jsonl"], directory: directory)
        let port = try proxy.waitForPort()
        let show = intact(["ca", "show", "--ca-dir", directory + "/ca"])
        let fingerprintLine = try XCTUnwrap(show.output.split(separator: "\n").first { $0.contains("SHA-256:") })
        let hex = String(fingerprintLine.split(separator: " ").last ?? "")
        let colonHex = stride(from: 0, to: hex.count, by: 2).map { offset -> String in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return hex[start..<hex.index(start, offsetBy: 2)].uppercased()
        }.joined(separator: ":")

        let dom = try ToolRun.run(Self.chromium, [
            "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--user-data-dir=\(directory)/chromium-profile",
            "--proxy-server=http://127.0.0.1:\(port)", "--dump-dom", "http://intact.proxy/"])
        XCTAssertEqual(dom.status, 0, dom.error)
        XCTAssertTrue(dom.output.contains("Install Intact's development CA"), dom.output)
        XCTAssertTrue(dom.output.contains(colonHex), dom.output)
        for link in ["intact-ca.crt", "intact-ca.mobileconfig", "intact-ca.p12", "intact-ca.pem"] {
            XCTAssertTrue(dom.output.contains("href=\"/\(link)\""), link)
        }

        let der = try ToolRun.curl(["-x", "http://127.0.0.1:\(port)", "-o", directory + "/intact-ca.crt",
                                    "-w", "%{http_code} %{content_type}", "http://intact.proxy/intact-ca.crt"])
        XCTAssertEqual(der.output, "200 application/x-x509-ca-cert", der.error)
        let parsed = try ToolRun.openssl(["x509", "-inform", "DER", "-in", directory + "/intact-ca.crt", "-noout",
                                          "-fingerprint", "-sha256"])
        XCTAssertTrue(parsed.output.contains(colonHex), parsed.output + parsed.error)

        // The proxy's own address, as a browser with no proxy set opens it.
        let direct = try ToolRun.curl(["-w", "\n%{http_code}", "http://127.0.0.1:\(port)/"])
        XCTAssertTrue(direct.output.hasSuffix("\n200"), direct.output + direct.error)
        XCTAssertTrue(direct.output.contains(colonHex), direct.output)

        proxy.signal(SIGINT)
        XCTAssertEqual(proxy.waitForExit(), 0, proxy.standardError)
        let recording = try RecordingReader.read(path: directory + "/run.jsonl")
        let local = recording.records.filter {
            let request = $0.leg(.downstream)?.request
            return request?.authority == "intact.proxy" || request?.targetForm == .origin
        }
        XCTAssertGreaterThanOrEqual(local.count, 3, "\(recording.records.map { $0.leg(.downstream)?.request?.path ?? "" })")
        for record in local {
            XCTAssertEqual(record.legs.map(\.role), [.downstream])
            XCTAssertNil(record.error)
            // A browser may also ask for /favicon.ico: the proxy answers that 404, also locally.
            let path = record.leg(.downstream)?.request?.path
            XCTAssertEqual(record.leg(.downstream)?.response?.status, path == "/favicon.ico" ? 404 : 200, path ?? "")
        }
    }
}
