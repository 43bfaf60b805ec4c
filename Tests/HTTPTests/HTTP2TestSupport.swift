import HTTP
import XCTest

/// A client and a server `HTTP2Session` wired back to back in memory.
///
/// `pump` moves bytes both ways until neither side has anything to send and
/// no event is produced; each batch of events goes to the handlers, which may
/// send more (that keeps the pump going).
final class HTTP2Pair {
    let client: HTTP2Session
    let server: HTTP2Session
    private(set) var clientEvents: [HTTP2Event] = []
    private(set) var serverEvents: [HTTP2Event] = []

    init(client: HTTP2Configuration = HTTP2Configuration(), server: HTTP2Configuration = HTTP2Configuration()) {
        self.client = HTTP2Session(role: .client, configuration: client)
        self.server = HTTP2Session(role: .server, configuration: server)
    }

    /// Pumps until quiet. `step` runs at the start of every round (to refill
    /// body queues); the handlers see each batch of events.
    func pump(step: () throws -> Void = {},
              onClient: ([HTTP2Event]) throws -> Void = { _ in },
              onServer: ([HTTP2Event]) throws -> Void = { _ in },
              file: StaticString = #filePath, line: UInt = #line) throws {
        for _ in 0..<1_000_000 {
            try step()
            let toServer = client.takeOutbound(maxBytes: 256 * 1024)
            let clientSent = client.takeEvents()
            let serverGot = server.receive(toServer)
            let toClient = server.takeOutbound(maxBytes: 256 * 1024)
            let serverSent = server.takeEvents()
            let clientGot = client.receive(toClient)
            let forClient = clientSent + clientGot
            let forServer = serverGot + serverSent
            clientEvents += forClient
            serverEvents += forServer
            if !forServer.isEmpty { try onServer(forServer) }
            if !forClient.isEmpty { try onClient(forClient) }
            if toServer.isEmpty && toClient.isEmpty && forClient.isEmpty && forServer.isEmpty
                && !client.wantsWrite && !server.wantsWrite {
                return
            }
        }
        XCTFail("the pair never went quiet", file: file, line: line)
    }
}

/// Builds raw HTTP/2 frames by hand (RFC 9113 §4.1) for abuse tests, with
/// HPACK "literal without indexing, new name" fields (RFC 7541 §6.2.2), no Huffman.
enum RawFrame {
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    enum Kind: UInt8 {
        case data = 0, headers = 1, rstStream = 3, settings = 4, ping = 6, goaway = 7, windowUpdate = 8, continuation = 9
    }

    static let endStream: UInt8 = 0x1
    static let ack: UInt8 = 0x1
    static let endHeaders: UInt8 = 0x4

    static func frame(_ kind: Kind, flags: UInt8 = 0, stream: UInt32 = 0, payload: [UInt8] = []) -> [UInt8] {
        let n = payload.count
        return [UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff), kind.rawValue, flags]
            + uint32(stream & 0x7fff_ffff) + payload
    }

    static func uint32(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8(v >> 16 & 0xff), UInt8(v >> 8 & 0xff), UInt8(v & 0xff)]
    }

    /// HPACK integer with an `prefixBits`-bit prefix (RFC 7541 §5.1).
    static func integer(_ value: Int, prefixBits: Int, first: UInt8 = 0) -> [UInt8] {
        let max = (1 << prefixBits) - 1
        if value < max { return [first | UInt8(value)] }
        var out = [first | UInt8(max)]
        var rest = value - max
        while rest >= 128 {
            out.append(UInt8(rest % 128 + 128))
            rest /= 128
        }
        out.append(UInt8(rest))
        return out
    }

    static func headerBlock(_ fields: [(String, String)]) -> [UInt8] {
        var out: [UInt8] = []
        for (name, value) in fields {
            out.append(0x00)
            out += integer(name.utf8.count, prefixBits: 7) + Array(name.utf8)
            out += integer(value.utf8.count, prefixBits: 7) + Array(value.utf8)
        }
        return out
    }

    static func headers(stream: UInt32, _ fields: [(String, String)], endStream: Bool = true) -> [UInt8] {
        frame(.headers, flags: endHeaders | (endStream ? RawFrame.endStream : 0), stream: stream,
              payload: headerBlock(fields))
    }

    static func request(stream: UInt32, path: String = "/", endStream: Bool = true) -> [UInt8] {
        headers(stream: stream, [(":method", "GET"), (":scheme", "https"), (":authority", "a.test"), (":path", path)],
                endStream: endStream)
    }

    static func settings() -> [UInt8] { frame(.settings) }
    static func ping(_ value: UInt8) -> [UInt8] { frame(.ping, payload: [UInt8](repeating: value, count: 8)) }
    static func rstStream(_ stream: UInt32, code: UInt32) -> [UInt8] { frame(.rstStream, stream: stream, payload: uint32(code)) }
    static func data(_ stream: UInt32, _ bytes: [UInt8], endStream: Bool = false) -> [UInt8] {
        frame(.data, flags: endStream ? RawFrame.endStream : 0, stream: stream, payload: bytes)
    }

    /// A frame parsed back out of a session's output.
    struct Parsed: Equatable {
        var type: UInt8
        var flags: UInt8
        var stream: UInt32
        var payload: [UInt8]

        /// GOAWAY's or RST_STREAM's error code.
        var errorCode: UInt32? {
            switch type {
            case Kind.goaway.rawValue: return payload.count >= 8 ? be32(payload, 4) : nil
            case Kind.rstStream.rawValue: return payload.count >= 4 ? be32(payload, 0) : nil
            default: return nil
            }
        }
    }

    static func be32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }

    /// Splits output into frames (skipping a client's preface magic).
    static func parse(_ bytes: [UInt8]) -> [Parsed] {
        var i = bytes.starts(with: preface) ? preface.count : 0
        var frames: [Parsed] = []
        while i + 9 <= bytes.count {
            let n = Int(bytes[i]) << 16 | Int(bytes[i + 1]) << 8 | Int(bytes[i + 2])
            guard i + 9 + n <= bytes.count else { break }
            frames.append(Parsed(type: bytes[i + 3], flags: bytes[i + 4], stream: be32(bytes, i + 5) & 0x7fff_ffff,
                                 payload: Array(bytes[(i + 9)..<(i + 9 + n)])))
            i += 9 + n
        }
        return frames
    }
}

extension Array where Element == HTTP2Event {
    var resets: [HTTP2StreamReset] {
        compactMap { if case .streamReset(let r) = $0 { return r } else { return nil } }
    }

    var connectionErrors: [HTTP2ConnectionError] {
        compactMap { if case .connectionError(let e) = $0 { return e } else { return nil } }
    }
}
