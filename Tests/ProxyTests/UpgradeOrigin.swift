import Foundation
import Glibc
import HTTP
import IntactTestSupport

/// A WebSocket-style echo origin on loopback, plain TCP, a thread per
/// connection: a request asking to upgrade is answered `101 Switching
/// Protocols` (when `accepts`) and from then on every byte (the client's
/// frames) is echoed until the client's FIN; any other request, or any
/// upgrade when it refuses, gets `refusal` and the connection goes on as HTTP.
final class UpgradeOrigin: @unchecked Sendable {
    private(set) var port = 0
    private var listener: Int32 = -1
    private let accepts: Bool
    private let refusal: String
    private let greeting: String?
    private let lock = NSLock()
    private var heads: [String] = []
    private var echoed: [Int] = []

    /// `greeting`: sent in the same write as the 101, then the origin
    /// half-closes and reads until the client's FIN (no echo).
    /// The `Sec-WebSocket-Accept` of the 101 is derived from the request's
    /// key (RFC 6455 §4.2.2), unless `wrongAccept` (a broken origin).
    private let wrongAccept: Bool

    init(accepts: Bool = true, greeting: String? = nil, wrongAccept: Bool = false,
         refusal: String = "HTTP/1.1 426 Upgrade Required\r\nContent-Length: 4\r\n\r\nnope") throws {
        self.accepts = accepts
        self.wrongAccept = wrongAccept
        self.greeting = greeting
        self.refusal = refusal
        (listener, port) = try RawSocket.serveLoopback { [self] client in handle(client) }
    }

    /// Every request head read, in order.
    var requestHeads: [String] { lock.withLock { heads } }
    /// Bytes echoed by each upgraded connection that ended.
    var echoedByteCounts: [Int] { lock.withLock { echoed } }

    func stop() { RawSocket.stopListening(listener) }

    /// Python for the WebSocket clients of the tests: `text_frames(count)`,
    /// `count` masked text frames of "hello, intact" (19 bytes each), as
    /// RFC 6455 §5.2 frames a client's message.
    static let pythonTextFrames = #"""
    def text_frames(count):
        mask = b"\x01\x02\x03\x04"
        payload = b"hello, intact"
        frame = b"\x81" + bytes([0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        return frame * count
    """#

    private func handle(_ client: Int32) {
        defer { close(client) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        while true {
            let head = RawSocket.read(client, until: "\r\n\r\n")
            guard head.hasSuffix("\r\n\r\n") else { return }
            lock.withLock { heads.append(head) }
            guard accepts, head.lowercased().contains("\r\nupgrade: ") else {
                RawSocket.send(client, Array(refusal.utf8))
                continue
            }
            let keyLine = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }
            let key = keyLine.map { $0.dropFirst("sec-websocket-key:".count).trimmingCharacters(in: .whitespaces) } ?? ""
            let accept = wrongAccept ? "d3JvbmcgYWNjZXB0IHZhbHVlIQ==" : ExtendedConnect.webSocketAccept(key: key)
            RawSocket.send(client, Array(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                                          + "Connection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n"
                                          + (greeting ?? "")).utf8))
            if greeting != nil {
                shutdown(client, Int32(SHUT_WR))
                _ = RawSocket.readAll(client)
                return
            }
            var total = 0
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { break }
                RawSocket.send(client, Array(buffer[0..<n]))
                total += n
            }
            lock.withLock { echoed.append(total) }
            return
        }
    }
}
