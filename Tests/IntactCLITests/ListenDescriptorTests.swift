import Foundation
import Glibc
import IntactTestSupport
import XCTest
@testable import IntactCLI

/// `--listen-fd N`: `intact server` and `intact proxy` serve on a listening
/// socket they were handed instead of binding one, and refuse a descriptor
/// that is not a listening TCP socket, saying what it is.
final class ListenDescriptorTests: XCTestCase {
    /// A TCP socket on 127.0.0.1 (port picked by the kernel), listening when `listens`.
    private func loopbackSocket(listens: Bool) throws -> (descriptor: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        XCTAssertTrue(bound)
        if listens { XCTAssertEqual(listen(descriptor, 16), 0) }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    func testTheServerServesOnTheSocketItIsHanded() throws {
        let directory = makeTemporaryDirectory()
        let (descriptor, port) = try loopbackSocket(listens: true)
        let output = CapturedOutput()
        let error = CapturedOutput()
        var curl: ToolRun?
        let status = try ServerCommand.serve(
            parsed(["server", "--listen-fd", "\(descriptor)", "--ca-dir", directory + "/certs"]),
            CommandContext(standardOutput: output.writer, standardError: error.writer)) { started in
            XCTAssertEqual(Int(started.listenAddress.port), port)
            curl = try? ToolRun.curl(["-sS", "--cacert", directory + "/certs/ca-cert.pem",
                                      "https://127.0.0.1:\(port)/suite/rest/x", "-o", "/dev/null", "-w", "%{http_code}"])
        }
        XCTAssertEqual(status, 0, error.text)
        XCTAssertEqual(curl?.output, "401", curl?.error ?? "curl did not run")
        XCTAssertTrue(output.text.contains("listening on 127.0.0.1:\(port)"), output.text)
        XCTAssertEqual(fcntl(descriptor, F_GETFD), -1, "the server took the descriptor over and closed it on stop")
    }

    func testADescriptorThatIsNotAListeningSocketIsRefusedSayingWhatItIs() throws {
        let file = makeTemporaryDirectory() + "/plain"
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        let regular = open(file, O_RDONLY)
        defer { close(regular) }
        let (bound, port) = try loopbackSocket(listens: false)
        defer { close(bound) }
        let unused = dup(regular)
        close(unused)
        let cases: [(Int32, String)] = [
            (regular, "it is a regular file"),
            (bound, "it is bound to 127.0.0.1:\(port) but not listening"),
            (unused, "it is not open"),
        ]
        for command in ["proxy", "server"] {
            for (descriptor, what) in cases {
                let run = intact([command, "--listen-fd", "\(descriptor)", "--ca-dir", makeTemporaryDirectory()])
                XCTAssertEqual(run.status, 1, "\(command) \(descriptor): \(run.error)")
                XCTAssertTrue(run.error.contains("--listen-fd \(descriptor): descriptor \(descriptor) is not a listening TCP socket: \(what)"),
                              run.error)
            }
        }
        XCTAssertNotEqual(fcntl(regular, F_GETFD), -1, "a refused descriptor is left open")
    }

    func testListenAndListenFDTogetherAreAUsageError() throws {
        let (descriptor, _) = try loopbackSocket(listens: true)
        defer { close(descriptor) }
        for command in ["proxy", "server"] {
            let run = intact([command, "--listen", "127.0.0.1:0", "--listen-fd", "\(descriptor)"])
            XCTAssertEqual(run.status, 2, run.error)
            XCTAssertTrue(run.error.contains("give either --listen or --listen-fd, not both"), run.error)
        }
    }
}
