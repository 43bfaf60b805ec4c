// intact-microbench: parse throughput and digest cost per message (issue 3), the
// cost of a recording line per exchange (issue 13), and the head digests of a
// proxied GET one by one, down to one 30-byte digest (issue 12).
//
// A measurement tool, not a test: it prints numbers and asserts nothing.
// Run it with `make microbench` (release build). Numbers from a shared
// machine are noisy; compare runs made on the same machine, and prefer the
// median of the repetitions it prints. For instruction counts, run one case
// under callgrind: `MICROBENCH_ONLY='nginx 200' MICROBENCH_ITERATIONS=200
// valgrind --tool=callgrind .build/release/intact-microbench`, and subtract a
// run with `MICROBENCH_ITERATIONS=0` (each case runs 5 repetitions).
import Evidence
import Foundation
import HTTP
import Hashing

/// A realistic sign-in request: the token POST of the mobile flow, as an app sends it.
let requestText = """
POST /suite/mobileAuthTokenConsumer HTTP/1.1\r
Host: intact.example.test:8443\r
User-Agent: IntactClient/0.1 (Linux; mobile simulator)\r
Accept: application/json\r
Accept-Language: en-US,en;q=0.9\r
Accept-Encoding: identity\r
Content-Type: application/x-www-form-urlencoded\r
Content-Length: 96\r
Cookie: __intactLoginTx=4f1c2a; JSESSIONID=node01abcdefghijklmnop\r
Intact-Trace: run-7f3a-0009\r
X-Forwarded-For: 127.0.0.1\r
Connection: keep-alive\r
\r
token=jA0ECQMC1PKb87zVWJUB0qsB9euIDt4oB1CgxLd5Y5IO6lSDiFCkxsIXj&codeVerifier=dBjftJeZ4CVP-mB92K27\r\n
"""
let request = Array(requestText.utf8.dropLast(2)) // the body is exactly 96 bytes

/// Times `body` over `iterations`, `repetitions` times; returns seconds per run, sorted.
func measure(iterations: Int, repetitions: Int = 5, _ body: () -> Void) -> [Double] {
    var runs: [Double] = []
    for _ in 0..<repetitions {
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<iterations { body() }
        runs.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    return runs.sorted()
}

/// Only the cases whose name contains `MICROBENCH_ONLY` run (all when unset): one case under
/// callgrind gives its instructions per op as (Ir at N iterations − Ir at 0) / (5 N).
let only = ProcessInfo.processInfo.environment["MICROBENCH_ONLY"]

/// Prints the median of `runs`, which is measured only when `name` is selected (`MICROBENCH_ONLY`).
func report(_ name: String, iterations: Int, bytesPerIteration: Int? = nil, runs measured: @autoclosure () -> [Double]) {
    if let only, !name.contains(only) { return }
    let runs = measured()
    let median = runs[runs.count / 2]
    let perOp = median / Double(iterations) * 1e6
    let label = name.count < 48 ? name + String(repeating: " ", count: 48 - name.count) : name
    var line = label + String(format: " %10.2f µs/op %12.0f op/s", perOp, Double(iterations) / median)
    if let bytes = bytesPerIteration {
        line += String(format: " %9.1f MB/s", Double(bytes * iterations) / median / 1e6)
    }
    print(line)
}

var sink = 0
/// Iterations per run: `MICROBENCH_ITERATIONS` (e.g. a few hundred under `valgrind --tool=callgrind`,
/// whose instruction counts do not depend on the load of a shared machine), default 20,000.
let n = Int(ProcessInfo.processInfo.environment["MICROBENCH_ITERATIONS"] ?? "") ?? 20_000

// 1. HTTP/1.1 request parsing, whole message per feed.
report("HTTP/1.1 parse (token POST, 1 feed)", iterations: n, bytesPerIteration: request.count,
       runs: measure(iterations: n) {
           var parser = HTTP1Parser(parsing: .request)
           parser.feed(request)
           sink &+= ((try? parser.parseAvailable()) ?? []).count
       })

// 2. The same request fed in 64-byte pieces (as small TLS records arrive).
report("HTTP/1.1 parse (token POST, 64-byte feeds)", iterations: n, bytesPerIteration: request.count,
       runs: measure(iterations: n) {
           var parser = HTTP1Parser(parsing: .request)
           var offset = 0
           while offset < request.count {
               parser.feed(Array(request[offset..<min(offset + 64, request.count)]))
               sink &+= ((try? parser.parseAvailable()) ?? []).count
               offset += 64
           }
       })

// Parse once to get the head and its raw bytes for the digest benchmarks.
var parser = HTTP1Parser(parsing: .request)
parser.feed(request)
guard case .requestHead(let parsed)? = (try? parser.parseAvailable())?.first else {
    fatalError("the benchmark request does not parse")
}

// Recordings digest with HMAC-SHA-256 under the digest key; plain SHA-256 for comparison.
let keyed = SecretDigester(key: [UInt8](repeating: 7, count: SecretDigester.keyByteCount)).digests
let plain = DigestFunction.sha256

// 3. Head digests (exact + semantic + per field) per message.
for function in [keyed, plain] {
    report("head digest, HTTP/1.1 wire form (\(parsed.head.fields.count) fields, \(function.algorithm.rawValue))",
           iterations: n, runs: measure(iterations: n) {
               let digest = HeadDigest(request: parsed.head, wire: .http1(head: parsed.rawHead), connectionScheme: "https",
                                       using: function)
               sink &+= digest.wireLength
           })
}
report("head digest, HTTP/2 wire form (hmac-sha256)", iterations: n,
       runs: measure(iterations: n) {
           let digest = HeadDigest(request: parsed.head, wire: .http2Request(parsed.head), connectionScheme: "https",
                                   using: keyed)
           sink &+= digest.wireLength
       })

// 4. Body digest throughput on 16 KiB chunks (PERFORMANCE.md: hash once, on large chunks).
let chunk = [UInt8](repeating: 0x5a, count: 16 * 1024)
let chunksPerBody = 64 // 1 MiB bodies
report("body digest, 1 MiB in 16 KiB chunks (hmac-sha256)", iterations: 200, bytesPerIteration: chunk.count * chunksPerBody,
       runs: measure(iterations: 200) {
           var digester = BodyDigester(using: keyed)
           for _ in 0..<chunksPerBody { digester.update(chunk) }
           sink &+= digester.finish().length
       })

// 5. One whole message: parse + head digest + body digest, the recorder's per-message cost.
report("parse + head digest + body digest (1 msg)", iterations: n, bytesPerIteration: request.count,
       runs: measure(iterations: n) {
           var parser = HTTP1Parser(parsing: .request)
           parser.feed(request)
           var digester = BodyDigester(using: keyed)
           for event in (try? parser.parseAvailable()) ?? [] {
               switch event {
               case .requestHead(let head):
                   sink &+= HeadDigest(request: head.head, wire: .http1(head: head.rawHead), connectionScheme: "https",
                                       using: keyed).wireLength
               case .body(let bytes): digester.update(bytes)
               default: break
               }
           }
           sink &+= digester.finish().length
       })

// 6. A recording line: a proxy's two-leg record of a keep-alive GET of 1 KiB (as the
// benchmark's wrk and nginx exchange), built as the recorder builds it, then encoded.
let getText = "GET /1k HTTP/1.1\r\nHost: localhost:8443\r\n"
let getHead = HTTPRequestHead(method: "GET", path: "/1k", fields: ["Host": "localhost:8443"])
let okFields: HTTPFields = ["Server": "nginx/1.22.1", "Date": "Tue, 01 Dec 2026 16:00:00 GMT",
                            "Content-Type": "application/octet-stream", "Content-Length": "1024",
                            "Last-Modified": "Tue, 01 Dec 2026 15:59:00 GMT", "Connection": "keep-alive",
                            "ETag": "\"692dba2c-400\"", "Accept-Ranges": "bytes"]
let okHead = HTTPResponseHead(status: 200, fields: okFields)
let okText = "HTTP/1.1 200 OK\r\n" + okFields.map { "\($0.name): \($0.value)\r\n" }.joined()
let redaction = RedactionPolicy(digester: SecretDigester(key: [UInt8](repeating: 7, count: SecretDigester.keyByteCount)))
let payload = [UInt8](repeating: 0x61, count: 1024)
func recordedLeg(_ role: ExchangeRecord.Leg.Role, _ connection: String) -> ExchangeRecord.Leg {
    let now = Timestamp.now()
    let request = RecordedMessage(
        request: getHead, connectionScheme: "https",
        digest: MessageDigest(head: HeadDigest(request: getHead, wire: .http1(head: Array(getText.utf8)),
                                               connectionScheme: "https", using: redaction.digests)),
        timings: MessageTimings(start: now, headersDone: now, end: now), redaction: redaction)
    var body = BodyDigester(using: redaction.digests)
    body.update(payload)
    let response = RecordedMessage(
        response: okHead, digest: MessageDigest(head: HeadDigest(response: okHead, wire: .http1(head: Array(okText.utf8)),
                                                                 using: redaction.digests), body: body.finish()),
        timings: MessageTimings(start: now, headersDone: now, end: now), redaction: redaction)
    return ExchangeRecord.Leg(role: role, connectionID: connection,
                              tls: TLSDetails(version: "TLSv1.3", cipher: "TLS_AES_256_GCM_SHA384", sni: "localhost", alpn: "http/1.1"),
                              request: request, response: response)
}
let record = ExchangeRecord(exchangeID: "d12.345", tap: "proxy",
                            legs: [recordedLeg(.downstream, "d12"), recordedLeg(.upstream, "u3")])
let lineLength = record.jsonLine().count
report("recording line of a two-leg 1 KiB GET (\(lineLength) bytes)", iterations: n, bytesPerIteration: lineLength,
       runs: measure(iterations: n) { sink &+= record.jsonLine().count })
report("two-leg record built (digests, redaction, timings)", iterations: n,
       runs: measure(iterations: n) { sink &+= ExchangeRecord(exchangeID: "d1.1", tap: "proxy",
                                                              legs: [recordedLeg(.downstream, "d1"), recordedLeg(.upstream, "u1")]).legs.count })

// 6b. Reading that line back, one record per op: Intact's own lines through the
// field-by-field decoder (what `intact verify` reads), and the same lines with one
// member a newer build might add, which the reader hands to JSONDecoder (the general
// path, and how every line was read before the fast decoder).
let headerJSON = String(decoding: try! JSONEncoder().encode(RecordingHeader(toolVersion: "0", tap: "proxy", mode: "reverse",
                                                                              redaction: redaction)), as: UTF8.self)
let header = "{\"type\":\"header\"," + headerJSON.dropFirst() + "\n"
let lines = max(n / 10, 100)
let ownLine = record.jsonLine()
let fastFile = Data(header.utf8) + Data(Array(repeating: ownLine, count: lines).joined())
let newerLine = Array(String(decoding: ownLine, as: UTF8.self)
    .replacingOccurrences(of: "\"tap\":", with: "\"newerMember\":1,\"tap\":").utf8)
let generalFile = Data(header.utf8) + Data(Array(repeating: newerLine, count: lines).joined())
report("recording line read back, fast decoder", iterations: lines, bytesPerIteration: ownLine.count,
       runs: measure(iterations: 1) { sink &+= (try? RecordingReader.read(fastFile, path: "fast"))?.records.count ?? 0 })
report("recording line read back, JSONDecoder", iterations: lines, bytesPerIteration: newerLine.count,
       runs: measure(iterations: 1) { sink &+= (try? RecordingReader.read(generalFile, path: "general"))?.records.count ?? 0 })

// 7. The four heads of a proxied 1 KiB GET, one by one: the request and the response
// as the benchmark's wrk and nginx send them (each is digested once per leg).
let getWire = Array(getText.utf8), okWire = Array(okText.utf8)
report("head digest, GET request (1 field, hmac-sha256)", iterations: n,
       runs: measure(iterations: n) {
           sink &+= HeadDigest(request: getHead, wire: .http1(head: getWire), connectionScheme: "https",
                               using: keyed).wireLength
       })
report("head digest, nginx 200 response (\(okFields.count) fields, hmac-sha256)", iterations: n,
       runs: measure(iterations: n) {
           sink &+= HeadDigest(response: okHead, wire: .http1(head: okWire), using: keyed).wireLength
       })
report("head digest, nginx 200 response (HTTP/2 wire form, hmac-sha256)", iterations: n,
       runs: measure(iterations: n) {
           sink &+= HeadDigest(response: okHead, wire: .http2Response(okHead), using: keyed).wireLength
       })

// 8. One digest of 30 bytes (a typical field group), the unit a head takes a dozen of.
let thirty = [UInt8](repeating: 0x61, count: 30)
for function in [keyed, plain] {
    report("one digest of 30 bytes (\(function.algorithm.rawValue))", iterations: n,
           runs: measure(iterations: n) {
               sink &+= Int(SHA256Digest.of(thirty, using: function).withUnsafeBytes { $0[0] })
           })
}

print("(checksum \(sink & 0xff); median of 5 runs each)")
