import HTTP

/// The HTTP/1.1 parser in both roles. Beyond "no crash", each run checks the
/// event order `HTTP1Event` documents (a head, non-empty body chunks, an
/// end; interim heads alone; a tunnel last) and that a `Content-Length`
/// body is exactly that long.
enum HTTP1ParserFuzzing {
    static func request(_ bytes: [UInt8]) {
        let input = FuzzInput(bytes, controlBytes: 2)
        var parser = HTTP1Parser(parsing: .request)
        var check = EventOrder()
        for piece in input.pieces(seed: input.control[0]) {
            parser.feed(piece)
            guard drain(&parser, &check, acceptTunnel: input.control[1] & 1 == 1) else { return }
        }
        parser.finish()
        _ = drain(&parser, &check, acceptTunnel: false)
    }

    static func response(_ bytes: [UInt8]) {
        let input = FuzzInput(bytes, controlBytes: 2)
        var parser = HTTP1Parser(parsing: .response)
        let methods: [HTTPMethod] = ["GET", "HEAD", "CONNECT", "POST"]
        for index in 0..<4 {
            parser.expectResponse(to: methods[Int(input.control[1] >> (2 * index)) & 3])
        }
        var check = EventOrder()
        for piece in input.pieces(seed: input.control[0]) {
            parser.feed(piece)
            guard drain(&parser, &check, acceptTunnel: false) else { return }
        }
        parser.finish()
        _ = drain(&parser, &check, acceptTunnel: false)
    }

    /// Takes every event available; false once the parser failed.
    private static func drain(_ parser: inout HTTP1Parser, _ check: inout EventOrder, acceptTunnel: Bool) -> Bool {
        while true {
            let event: HTTP1Event?
            do {
                event = try parser.next()
            } catch {
                precondition(!error.description.isEmpty, "a parse error without a description")
                return false
            }
            guard let event else {
                if parser.isAwaitingTunnelDecision {
                    if acceptTunnel { parser.acceptTunnel() } else { parser.refuseTunnel() }
                    continue
                }
                return true
            }
            check.observe(event)
        }
    }

    /// The order `HTTP1Event` promises, checked event by event.
    private struct EventOrder {
        private enum State { case betweenMessages, inBody(remaining: Int?), tunnel }
        private var state = State.betweenMessages

        mutating func observe(_ event: HTTP1Event) {
            switch (state, event) {
            case (.betweenMessages, .requestHead(let head)):
                start(head.framing)
            case (.betweenMessages, .responseHead(let head)):
                if (100...199).contains(head.head.status), head.head.status != 101 {
                    precondition(head.framing == .none, "an interim response with a body framing")
                } else {
                    start(head.framing)
                }
            case (.inBody(let remaining), .body(let chunk)):
                precondition(!chunk.isEmpty, "an empty body event")
                if let remaining {
                    precondition(chunk.count <= remaining, "more body than Content-Length")
                    state = .inBody(remaining: remaining - chunk.count)
                }
            case (.inBody(let remaining), .end):
                precondition(remaining == nil || remaining == 0, "a message ended short of its Content-Length")
                state = .betweenMessages
            case (.tunnel, .tunnel):
                break
            case (.betweenMessages, .tunnel):
                state = .tunnel
            default:
                preconditionFailure("event \(event) out of order")
            }
        }

        private mutating func start(_ framing: HTTP1Framing) {
            switch framing {
            case .contentLength(let length):
                precondition(length >= 0, "a negative Content-Length")
                state = .inBody(remaining: length)
            case .chunked, .closeDelimited, .none:
                state = .inBody(remaining: framing == .none ? 0 : nil)
            case .tunnel:
                state = .betweenMessages
            }
        }
    }
}
