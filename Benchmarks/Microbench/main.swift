// intact-microbench: parse throughput and digest cost per message (issue 3).
//
// A measurement tool, not a test: it prints numbers and asserts nothing.
// Run it with `make microbench` (release build). Numbers from a shared
// machine are noisy; compare runs made on the same machine, and prefer the
// median of the repetitions it prints.
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

func report(_ name: String, iterations: Int, bytesPerIteration: Int? = nil, runs: [Double]) {
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
let n = 20_000

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

print("(checksum \(sink & 0xff); median of 5 runs each)")
