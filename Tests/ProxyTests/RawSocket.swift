import Foundation
import IntactTestSupport
import Glibc

/// Blocking loopback sockets for the interop tests: a client connection
/// and an origin that answers with exact bytes (an odd reason phrase, an
/// interim response, HTTP/1.0 framing) for real clients to read.
enum RawSocket {
    /// `127.0.0.1:port` as a socket address (port 0: any).
    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    /// A TCP socket bound to 127.0.0.1 on an ephemeral port, and that port.
    static func bindLoopback() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else {
            close(fd)
            throw TestSetupFailure("cannot bind a loopback port")
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Connects to 127.0.0.1:port (blocking); nil when refused.
    static func connect(port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(fd)
            return nil
        }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    static func send(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// Reads until the peer closes (or 10 s pass, or `limit` bytes arrived).
    static func readAll(_ fd: Int32, limit: Int = 1 << 20) -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while out.count < limit {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            out += buffer[0..<n]
        }
        return out
    }

    /// Reads until `marker` appeared (or the peer closed).
    static func read(_ fd: Int32, until marker: String) -> String {
        var text = ""
        var byte: UInt8 = 0
        while !text.hasSuffix(marker) {
            guard recv(fd, &byte, 1, 0) == 1 else { break }
            text.unicodeScalars.append(Unicode.Scalar(byte))
        }
        return text
    }

    /// Listens on an ephemeral loopback port and hands each accepted
    /// connection to `handle` on a thread of its own, until the listener is
    /// shut down (`stopListening`). Returns the listener and its port.
    static func serveLoopback(_ handle: @escaping @Sendable (Int32) -> Void) throws -> (fd: Int32, port: Int) {
        let (listener, port) = try bindLoopback()
        guard listen(listener, 16) == 0 else { throw TestSetupFailure("a loopback origin cannot listen") }
        Thread.detachNewThread {
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                Thread.detachNewThread { handle(client) }
            }
        }
        return (listener, port)
    }

    static func stopListening(_ listener: Int32) { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }
}

/// A plain-HTTP origin on loopback that answers each request head with
/// exactly `answer`'s bytes, then closes its side and drains the peer
/// before closing (a close-delimited body ends there), a thread per connection.
final class RawOrigin: @unchecked Sendable {
    private(set) var port = 0
    private var listener: Int32 = -1
    private let answer: String
    private let lock = NSLock()
    private var heads: [String] = []

    init(answer: String) throws {
        self.answer = answer
        (listener, port) = try RawSocket.serveLoopback { [self] client in handle(client) }
    }

    /// Every request head read, in order.
    var requestHeads: [String] { lock.withLock { heads } }

    func stop() { RawSocket.stopListening(listener) }

    private func handle(_ client: Int32) {
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let head = RawSocket.read(client, until: "\r\n\r\n")
        lock.withLock { heads.append(head) }
        RawSocket.send(client, Array(answer.utf8))
        shutdown(client, Int32(SHUT_WR))
        _ = RawSocket.readAll(client)
        close(client)
    }
}
