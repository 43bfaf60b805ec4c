import Evidence
import Foundation
import IntactTestSupport
import XCTest
@testable import Proxy

/// Lenient server names, driven by openssl s_client: an IP address,
/// `host:port`, an invalid name or none as SNI is accepted, the leaf is
/// minted for a name the client will check (the address or host inside the
/// SNI, the CONNECT target, the upstream), and the record notes what the
/// client sent. A name OpenSSL itself refuses (over 255 bytes, a NUL) still
/// leaves a record with the CONNECT target and the name escaped (on the
/// playbook: a ClientHello written by hand). The odd names OpenSSL accepts
/// stay on `openssl s_client` against nginx: the playbook's TLS ends (Intact's
/// `TLSEngine`) never send an IP address, `host:port` or `_` as SNI.
final class ProxyServerNameTests: XCTestCase {
    /// One request through `openssl s_client` (with `arguments` for the
    /// connection and the check of the certificate); its output and status.
    /// The request asks for a missing file, so the answer is text (a 404).
    private func sClient(_ arguments: [String], request: String = "GET /absent HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n")
        throws -> ToolRun {
        let quoted = arguments.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        return try ToolRun.run("/bin/sh", ["-c", "printf '\(request)' | openssl s_client -quiet -verify_return_error \(quoted)"])
    }

    func testReverseModeAcceptsAnIPAddressOrHostPortAsServerName() throws {
        let (origin, _) = try NginxOrigin.serving([("one-kib", 1024)])
        defer { origin.stop() }
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: origin.port))
        let proxy = try ProxyHarness(mode: .reverse(upstream)) { $0.upstreamVerification = .caFile(origin.caFile) }
        let address = "127.0.0.1:\(proxy.port)"
        // An IP address as SNI (RFC 6066 forbids it; Go and Java clients send it): a leaf for that address.
        let ip = try sClient(["-connect", address, "-servername", "127.0.0.1", "-CAfile", proxy.caFile,
                              "-verify_ip", "127.0.0.1"])
        XCTAssertTrue(ip.output.hasPrefix("HTTP/1.1 404 Not Found\r\n"), ip.output + ip.error)
        // host:port as SNI (hey and other Go tools): a leaf for the host.
        let hostPort = try sClient(["-connect", address, "-servername", "localhost:\(proxy.port)", "-CAfile", proxy.caFile,
                                    "-verify_hostname", "localhost"])
        XCTAssertTrue(hostPort.output.hasPrefix("HTTP/1.1 404 Not Found\r\n"), hostPort.output + hostPort.error)
        // A name that is no host name: a leaf for the configured upstream.
        let invalid = try sClient(["-connect", address, "-servername", "bad_name.example", "-CAfile", proxy.caFile,
                                   "-verify_ip", "127.0.0.1"])
        XCTAssertTrue(invalid.output.hasPrefix("HTTP/1.1 404 Not Found\r\n"), invalid.output + invalid.error)

        let records = try proxy.stopAndRead().records
        XCTAssertEqual(records.count, 3)
        let tls = records.map { $0.leg(.downstream)?.tls }
        XCTAssertEqual(tls.map { $0?.sni }, ["127.0.0.1", "localhost:\(proxy.port)", "bad_name.example"])
        XCTAssertTrue(tls[0]?.sniIssue?.contains("IP address") == true, "\(String(describing: tls[0]))")
        XCTAssertTrue(tls[1]?.sniIssue?.contains("host:port") == true, "\(String(describing: tls[1]))")
        XCTAssertTrue(tls[2]?.sniIssue?.contains("'_'") == true, "\(String(describing: tls[2]))")
        records.forEach { assertCleanHop($0) }
    }

    func testForwardModeMintsForTheConnectTargetWhenTheServerNameIsOdd() throws {
        let (origin, _) = try NginxOrigin.serving([("one-kib", 1024)])
        defer { origin.stop() }
        let proxy = try ProxyHarness { $0.upstreamVerification = .caFile(origin.caFile) }
        let run = try sClient(["-proxy", "127.0.0.1:\(proxy.port)", "-connect", "127.0.0.1:\(origin.port)",
                               "-servername", "not_a_host:1", "-CAfile", proxy.caFile, "-verify_ip", "127.0.0.1"])
        XCTAssertTrue(run.output.hasPrefix("HTTP/1.1 404 Not Found\r\n"), run.output + run.error)
        let record = try XCTUnwrap(proxy.stopAndRead().records.first { $0.leg(.upstream) != nil })
        XCTAssertEqual(record.leg(.downstream)?.tls?.sni, "not_a_host:1")
        XCTAssertNotNil(record.leg(.downstream)?.tls?.sniIssue)
        assertCleanHop(record)
    }

    /// OpenSSL's own ClientHello parser refuses a server name over 255 bytes
    /// or with a NUL before any callback, so no server built on it can accept
    /// one (the transcript covers the hello: it cannot be edited either). The
    /// proxy still records the tunnel: its CONNECT target, the name escaped,
    /// what failed.
    func testAServerNameOpenSSLRefusesStillLeavesARecordWithTheConnectTarget() throws {
        // On the playbook: the ClientHello is bytes the test writes, the origin the test's TLS end.
        let playbook = try ProxyPlaybook()
        let target = "origin.test:443"
        let long = [UInt8](repeating: UInt8(ascii: "a"), count: 300)
        let withNUL = Array("nul".utf8) + [0] + Array("byte.test".utf8)
        for name in [long, withNUL] {
            let client = try playbook.connectClient()
            client.send("CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n\r\n")
            _ = try playbook.acceptDial(host: "origin.test", port: 443, tls: true)
            XCTAssertTrue(client.readText().hasPrefix("HTTP/1.1 200"))
            client.send(Self.clientHello(serverName: name))
            playbook.run()
            let answer = client.read()
            XCTAssertTrue(client.receivedEOF || client.isClosed, "the proxy closed the connection")
            // A fatal alert record (type 21), not a ServerHello.
            XCTAssertEqual(answer.first, 21, "\(answer.prefix(8))")
        }
        let records = playbook.records
        XCTAssertEqual(records.count, 2)
        for record in records {
            let down = try XCTUnwrap(record.leg(.downstream))
            XCTAssertEqual(down.request?.method, "CONNECT")
            XCTAssertEqual(down.request?.authority, target)
            XCTAssertNotNil(record.error)
        }
        XCTAssertEqual(records.map { $0.leg(.downstream)?.tls?.sni },
                       [String(repeating: "a", count: 300), "nul\\x00byte.test"])
        XCTAssertTrue(records.allSatisfy { $0.leg(.downstream)?.tls?.sniIssue != nil })
    }

    /// A minimal TLS 1.2/1.3 ClientHello record with one SNI host_name entry.
    static func clientHello(serverName: [UInt8]) -> [UInt8] {
        func u16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        let nameEntry = [0] + u16(serverName.count) + serverName
        let sni = u16(0) + u16(nameEntry.count + 2) + u16(nameEntry.count) + nameEntry
        let groups = u16(10) + u16(4) + u16(2) + u16(0x001D)
        let signatures = u16(13) + u16(4) + u16(2) + u16(0x0403)
        let extensions = sni + groups + signatures
        var body: [UInt8] = [3, 3] + [UInt8](repeating: 7, count: 32) + [0]
        body += u16(2) + u16(0xC02B) + [1, 0]
        body += u16(extensions.count) + extensions
        let handshake = [1, 0] + u16(body.count) + body
        return [22, 3, 1] + u16(handshake.count) + handshake
    }
}
