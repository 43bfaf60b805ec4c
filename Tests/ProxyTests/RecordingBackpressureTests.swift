import Evidence
import IntactTestSupport
import Foundation
import XCTest
@testable import Proxy

/// The recording's bound pushes back on the clients: with a queue that is
/// full after every record, each record holds the loop's client
/// connections (`LoopState.holdReading`) until the writer has room, and
/// reading resumes then — every request is still answered and every record
/// written, none dropped.
final class RecordingBackpressureTests: XCTestCase {
    func testAFullQueueHoldsReadingAndEveryRecordIsWritten() throws {
        let proxy = try ProxyHarness { configuration in
            configuration.recording?.queueLimit = 1
            configuration.loopCount = 1
        }
        let count = 20
        // Port 1 refuses: each request is answered 502 by the proxy and recorded,
        // on one kept-alive client connection whose next request is read only after a resume.
        let urls = (0..<count).map { "http://127.0.0.1:1/item-\($0)" }
        let run = try ToolRun.curl(["--max-time", "30", "-x", proxy.proxyURL, "-w", "%{http_code}\\n"]
                                   + urls.flatMap { ["-o", "/dev/null", $0] })
        XCTAssertEqual(run.status, 0, run.error)
        XCTAssertEqual(run.output.split(separator: "\n").map(String.init), Array(repeating: "502", count: count))
        let recording = try proxy.stopAndRead()
        let paths = recording.records.compactMap { $0.leg(.downstream)?.request?.path }
        XCTAssertEqual(paths.sorted(), (0..<count).map { "/item-\($0)" }.sorted())
    }
}
