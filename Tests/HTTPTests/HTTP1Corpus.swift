import HTTP

/// Valid HTTP/1.1 messages with the events they must parse into, shared by
/// the parser and serializer tests.
struct HTTP1CorpusEntry {
    var name: String
    var kind: HTTP1Parser.Kind
    var wire: String
    /// For responses: the methods of the requests they answer, in order.
    var methods: [HTTPMethod] = []
    /// Whether the peer closes after the bytes (ends close-delimited bodies).
    var finish = false
    /// Whether writing the parsed events again gives back `wire` byte for byte.
    var exactRoundTrip = true
    /// `describe` of the expected events.
    var expected: [String]

    var bytes: [UInt8] { wire.latin1Bytes }
}

/// A one-line description of an event, used to compare event streams.
func describe(_ event: HTTP1Event) -> String {
    switch event {
    case .requestHead(let r):
        let h = r.head
        var line = "\(h.method) \(h.targetForm) scheme=\(h.scheme ?? "-") authority=\(h.authority ?? "-") path=\(h.path)"
        line += " \(h.version) fields=\(h.fields.count) \(r.framing) keepAlive=\(r.keepAlive)"
        if r.expectsContinue { line += " expect100" }
        if r.upgradeRequested { line += " upgrade" }
        return line
    case .responseHead(let r):
        var line = "\(r.head.version) \(r.head.status) \(r.head.reason) fields=\(r.head.fields.count) \(r.framing)"
        line += " keepAlive=\(r.keepAlive) to=\(r.requestMethod)"
        if r.isInterim { line += " interim" }
        return line
    case .body(let bytes):
        return "body \(String(latin1: bytes))"
    case .end(let trailers):
        return "end" + (trailers.map { " " + $0.map(\.description).joined(separator: ", ") } ?? "")
    case .tunnel(let leftover):
        return "tunnel \(String(latin1: leftover))"
    }
}

/// Merges adjacent body events and adjacent tunnel events, so streams fed in
/// different pieces compare.
func coalesced(_ events: [HTTP1Event]) -> [HTTP1Event] {
    var out: [HTTP1Event] = []
    for event in events {
        switch (out.last, event) {
        case let (.body(previous)?, .body(more)): out[out.count - 1] = .body(previous + more)
        case let (.tunnel(previous)?, .tunnel(more)): out[out.count - 1] = .tunnel(leftover: previous + more)
        default: out.append(event)
        }
    }
    return out
}

/// Parses `bytes` fed in pieces of `pieceSize` (all at once when nil),
/// pulling events after every piece. Returns the events and the error, if any.
func parse(_ bytes: [UInt8], kind: HTTP1Parser.Kind, methods: [HTTPMethod] = [], finish: Bool = false,
           pieceSize: Int? = nil, limits: HTTP1ParserLimits = .standard) -> (events: [HTTP1Event], error: HTTP1ParseError?) {
    var parser = HTTP1Parser(parsing: kind, limits: limits)
    for method in methods { parser.expectResponse(to: method) }
    var events: [HTTP1Event] = []
    let size = max(pieceSize ?? bytes.count, 1)
    var start = 0
    do {
        repeat {
            let end = min(start + size, bytes.count)
            parser.feed(Array(bytes[start..<end]))
            start = end
            events += try parser.parseAvailable()
        } while start < bytes.count
        if finish {
            parser.finish()
            events += try parser.parseAvailable()
        }
    } catch {
        return (events, error)
    }
    return (events, nil)
}

enum HTTP1Corpus {
    static let requests: [HTTP1CorpusEntry] = [
        HTTP1CorpusEntry(name: "GET origin form", kind: .request,
                         wire: "GET /a/b?c=d HTTP/1.1\r\nHost: example.test\r\nUser-Agent: t\r\naccept: */*\r\n\r\n",
                         expected: ["GET origin scheme=- authority=example.test path=/a/b?c=d HTTP/1.1 fields=3 none keepAlive=true",
                                    "end"]),
        HTTP1CorpusEntry(name: "POST content-length", kind: .request,
                         wire: "POST /login HTTP/1.1\r\nHost: example.test:8443\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello",
                         expected: ["POST origin scheme=- authority=example.test:8443 path=/login HTTP/1.1 fields=3 contentLength(5) keepAlive=true",
                                    "body hello", "end"]),
        HTTP1CorpusEntry(name: "POST content-length zero", kind: .request,
                         wire: "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n",
                         expected: ["POST origin scheme=- authority=h path=/x HTTP/1.1 fields=2 contentLength(0) keepAlive=true", "end"]),
        HTTP1CorpusEntry(name: "POST chunked with trailers", kind: .request,
                         wire: "POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTrailer: Digest\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\nDigest: abc\r\n\r\n",
                         expected: ["POST origin scheme=- authority=h path=/up HTTP/1.1 fields=3 chunked keepAlive=true",
                                    "body hello world", "end Digest: abc"]),
        HTTP1CorpusEntry(name: "POST chunked with extensions", kind: .request,
                         wire: "POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b;c=\"q\\\"x\" ; d\r\nhello\r\n000A\r\n0123456789\r\n0;last\r\n\r\n",
                         exactRoundTrip: false,
                         expected: ["POST origin scheme=- authority=h path=/up HTTP/1.1 fields=2 chunked keepAlive=true",
                                    "body hello0123456789", "end"]),
        HTTP1CorpusEntry(name: "absolute form", kind: .request,
                         wire: "GET http://example.test:8080/a?b=c HTTP/1.1\r\nHost: example.test:8080\r\n\r\n",
                         expected: ["GET absolute scheme=http authority=example.test:8080 path=/a?b=c HTTP/1.1 fields=1 none keepAlive=true", "end"]),
        HTTP1CorpusEntry(name: "absolute form https IPv6", kind: .request,
                         wire: "GET https://[::1]:8443/ HTTP/1.1\r\nHost: [::1]:8443\r\n\r\n",
                         expected: ["GET absolute scheme=https authority=[::1]:8443 path=/ HTTP/1.1 fields=1 none keepAlive=true", "end"]),
        HTTP1CorpusEntry(name: "asterisk form", kind: .request,
                         wire: "OPTIONS * HTTP/1.1\r\nHost: example.test\r\n\r\n",
                         expected: ["OPTIONS asterisk scheme=- authority=example.test path=* HTTP/1.1 fields=1 none keepAlive=true", "end"]),
        HTTP1CorpusEntry(name: "CONNECT authority form", kind: .request,
                         wire: "CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n",
                         expected: ["CONNECT authority scheme=- authority=example.test:443 path= HTTP/1.1 fields=1 none keepAlive=true", "end"]),
        HTTP1CorpusEntry(name: "pipelined requests", kind: .request,
                         wire: "GET /1 HTTP/1.1\r\nHost: h\r\n\r\nPOST /2 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabcGET /3 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
                         expected: ["GET origin scheme=- authority=h path=/1 HTTP/1.1 fields=1 none keepAlive=true", "end",
                                    "POST origin scheme=- authority=h path=/2 HTTP/1.1 fields=2 contentLength(3) keepAlive=true", "body abc", "end",
                                    "GET origin scheme=- authority=h path=/3 HTTP/1.1 fields=2 none keepAlive=false", "end"]),
        HTTP1CorpusEntry(name: "HTTP/1.0 without Host", kind: .request,
                         wire: "GET / HTTP/1.0\r\nUser-Agent: old\r\n\r\n",
                         expected: ["GET origin scheme=- authority=- path=/ HTTP/1.0 fields=1 none keepAlive=false", "end"]),
        HTTP1CorpusEntry(name: "HTTP/1.0 keep-alive", kind: .request,
                         wire: "GET / HTTP/1.0\r\nHost: h\r\nConnection: Keep-Alive\r\n\r\n",
                         expected: ["GET origin scheme=- authority=h path=/ HTTP/1.0 fields=2 none keepAlive=true", "end"]),
        HTTP1CorpusEntry(name: "expect 100-continue", kind: .request,
                         wire: "PUT /f HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok",
                         expected: ["PUT origin scheme=- authority=h path=/f HTTP/1.1 fields=3 contentLength(2) keepAlive=true expect100",
                                    "body ok", "end"]),
        HTTP1CorpusEntry(name: "upgrade request", kind: .request,
                         wire: "GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
                         expected: ["GET origin scheme=- authority=h path=/ws HTTP/1.1 fields=3 none keepAlive=true upgrade", "end"]),
        HTTP1CorpusEntry(name: "repeated identical content-length", kind: .request,
                         wire: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nhi",
                         expected: ["POST origin scheme=- authority=h path=/ HTTP/1.1 fields=3 contentLength(2) keepAlive=true", "body hi", "end"]),
        HTTP1CorpusEntry(name: "empty lines before request line", kind: .request,
                         wire: "\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", exactRoundTrip: false,
                         expected: ["GET origin scheme=- authority=h path=/ HTTP/1.1 fields=1 none keepAlive=true", "end"]),
        HTTP1CorpusEntry(name: "obs-text and tabs in value", kind: .request,
                         wire: "GET / HTTP/1.1\r\nHost: h\r\nX-Name: caf\u{E9}\tb\r\nX-Empty: \r\n\r\n",
                         expected: ["GET origin scheme=- authority=h path=/ HTTP/1.1 fields=3 none keepAlive=true", "end"]),
    ]

    static let responses: [HTTP1CorpusEntry] = [
        HTTP1CorpusEntry(name: "200 content-length", kind: .response,
                         wire: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello", methods: ["GET"],
                         expected: ["HTTP/1.1 200 OK fields=2 contentLength(5) keepAlive=true to=GET", "body hello", "end"]),
        HTTP1CorpusEntry(name: "200 chunked with trailers", kind: .response,
                         wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 1\r\nX-Other: 2\r\n\r\n", methods: ["GET"],
                         expected: ["HTTP/1.1 200 OK fields=1 chunked keepAlive=true to=GET", "body abc", "end X-Sum: 1, X-Other: 2"]),
        HTTP1CorpusEntry(name: "200 chunked with extension", kind: .response,
                         wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n3;n=v\r\nabc\r\n0\r\n\r\n", methods: ["GET"],
                         exactRoundTrip: false,
                         expected: ["HTTP/1.1 200 OK fields=1 chunked keepAlive=true to=GET", "body abc", "end"]),
        HTTP1CorpusEntry(name: "200 close-delimited", kind: .response,
                         wire: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil close", methods: ["GET"], finish: true,
                         expected: ["HTTP/1.1 200 OK fields=1 closeDelimited keepAlive=false to=GET", "body until close", "end"]),
        HTTP1CorpusEntry(name: "HTTP/1.0 close-delimited", kind: .response,
                         wire: "HTTP/1.0 200 OK\r\nServer: old\r\n\r\nbody", methods: ["GET"], finish: true,
                         expected: ["HTTP/1.0 200 OK fields=1 closeDelimited keepAlive=false to=GET", "body body", "end"]),
        HTTP1CorpusEntry(name: "HEAD response with length", kind: .response,
                         wire: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", methods: ["HEAD"],
                         expected: ["HTTP/1.1 200 OK fields=1 none keepAlive=true to=HEAD", "end"]),
        HTTP1CorpusEntry(name: "204", kind: .response,
                         wire: "HTTP/1.1 204 No Content\r\nDate: today\r\n\r\n", methods: ["DELETE"],
                         expected: ["HTTP/1.1 204 No Content fields=1 none keepAlive=true to=DELETE", "end"]),
        HTTP1CorpusEntry(name: "304", kind: .response,
                         wire: "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\nContent-Length: 10\r\n\r\n", methods: ["GET"],
                         expected: ["HTTP/1.1 304 Not Modified fields=2 none keepAlive=true to=GET", "end"]),
        HTTP1CorpusEntry(name: "100 then 200", kind: .response,
                         wire: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", methods: ["PUT"],
                         expected: ["HTTP/1.1 100 Continue fields=0 none keepAlive=true to=PUT interim",
                                    "HTTP/1.1 201 Created fields=1 contentLength(2) keepAlive=true to=PUT", "body ok", "end"]),
        HTTP1CorpusEntry(name: "103 then 200", kind: .response,
                         wire: "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", methods: ["GET"],
                         expected: ["HTTP/1.1 103 Early Hints fields=1 none keepAlive=true to=GET interim",
                                    "HTTP/1.1 200 OK fields=1 contentLength(0) keepAlive=true to=GET", "end"]),
        HTTP1CorpusEntry(name: "CONNECT 200 becomes a tunnel", kind: .response,
                         wire: "HTTP/1.1 200 Connection Established\r\n\r\n\u{16}\u{03}\u{01}", methods: ["CONNECT"],
                         expected: ["HTTP/1.1 200 Connection Established fields=0 tunnel keepAlive=false to=CONNECT",
                                    "tunnel \u{16}\u{03}\u{01}"]),
        HTTP1CorpusEntry(name: "CONNECT refused has a body", kind: .response,
                         wire: "HTTP/1.1 403 Forbidden\r\nContent-Length: 2\r\n\r\nno", methods: ["CONNECT"],
                         expected: ["HTTP/1.1 403 Forbidden fields=1 contentLength(2) keepAlive=true to=CONNECT", "body no", "end"]),
        HTTP1CorpusEntry(name: "101 switching protocols", kind: .response,
                         wire: "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n\u{81}\u{00}", methods: ["GET"],
                         expected: ["HTTP/1.1 101 Switching Protocols fields=2 tunnel keepAlive=false to=GET", "tunnel \u{81}\u{00}"]),
        HTTP1CorpusEntry(name: "pipelined responses", kind: .response,
                         wire: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nHTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nb\r\n0\r\n\r\n",
                         methods: ["GET", "HEAD", "GET"],
                         expected: ["HTTP/1.1 200 OK fields=1 contentLength(1) keepAlive=true to=GET", "body a", "end",
                                    "HTTP/1.1 200 OK fields=1 none keepAlive=true to=HEAD", "end",
                                    "HTTP/1.1 404 Not Found fields=1 chunked keepAlive=true to=GET", "body b", "end"]),
        HTTP1CorpusEntry(name: "connection close", kind: .response,
                         wire: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nz", methods: ["GET"],
                         expected: ["HTTP/1.1 200 OK fields=2 contentLength(1) keepAlive=false to=GET", "body z", "end"]),
        HTTP1CorpusEntry(name: "empty reason", kind: .response,
                         wire: "HTTP/1.1 299 \r\nContent-Length: 0\r\n\r\n", methods: ["GET"],
                         expected: ["HTTP/1.1 299  fields=1 contentLength(0) keepAlive=true to=GET", "end"]),
    ]

    static var all: [HTTP1CorpusEntry] { requests + responses }
}
