import XCTest
import Hashing
@testable import HTTP

/// A memo changes whether a head's digests are computed, never what they
/// are: the same message on the other leg reuses the digests of the ranges
/// whose bytes are equal, and every other digest is taken afresh.
final class HeadDigestMemoTests: XCTestCase {
    private static let keyed = SecretDigester(key: (0..<32).map { UInt8($0) }).digests

    private func request(_ fields: HTTPFields) -> HTTPRequestHead {
        HTTPRequestHead(method: .get, authority: "a.test", path: "/x?y=1", fields: fields)
    }

    private func http1(_ head: HTTPRequestHead) -> HeadDigest.WireForm {
        .http1(head: Array(("GET /x?y=1 HTTP/1.1\r\n" + head.fields.map { "\($0.name): \($0.value)\r\n" }.joined()).utf8))
    }

    func testAForwardedRequestHasTheDigestsItWouldHaveWithoutAMemo() {
        let down = request(["Host": "a.test", "User-Agent": "t/1", "Accept": "*/*", "Connection": "keep-alive"])
        var up = down
        up.fields = ["user-agent": "t/1", "accept": "*/*"]
        up.scheme = "https"
        up.version = .http2
        for function in [DigestFunction.sha256, Self.keyed] {
            var memo: HeadDigestMemo?
            let first = HeadDigest(request: down, wire: http1(down), connectionScheme: "https", using: function,
                                   memo: &memo, keepingMemo: true)
            XCTAssertEqual(first, HeadDigest(request: down, wire: http1(down), connectionScheme: "https", using: function))
            let kept = try! XCTUnwrap(memo)
            XCTAssertGreaterThan(kept.entries.count, 4, "groups, target, semantic")
            let second = HeadDigest(request: up, wire: .http2Request(up), connectionScheme: "https", using: function,
                                    memo: &memo, keepingMemo: false)
            XCTAssertNil(memo, "read, not kept")
            XCTAssertEqual(second, HeadDigest(request: up, wire: .http2Request(up), connectionScheme: "https", using: function))
            XCTAssertEqual(second.semantic, first.semantic, "an unchanged request is equivalent")
            XCTAssertEqual(second.fields["user-agent"], first.fields["user-agent"])
        }
    }

    func testARepeatedRequestTakesItsWireDigestFromTheHeadBeforeTheOtherLegs() throws {
        let down = request(["Host": "a.test", "User-Agent": "t/1", "Accept": "*/*"])
        var up = down
        up.fields = ["user-agent": "t/1", "accept": "*/*"]
        up.version = .http2
        for function in [DigestFunction.sha256, Self.keyed] {
            // One exchange on a connection that keeps every memo: down, then up.
            var memo: HeadDigestMemo?
            _ = HeadDigest(request: down, wire: http1(down), connectionScheme: "https", using: function, memo: &memo,
                           keepingMemo: true)
            let downMemo = memo
            _ = HeadDigest(request: up, wire: .http2Request(up), connectionScheme: "https", using: function, memo: &memo,
                           keepingMemo: true)
            // The next exchange's client request reads the upstream head's memo, then the client head's before it.
            let again = HeadDigest(request: down, wire: http1(down), connectionScheme: "https", using: function,
                                   memo: &memo, earlier: downMemo, keepingMemo: true)
            XCTAssertEqual(again, HeadDigest(request: down, wire: http1(down), connectionScheme: "https", using: function))
            let kept = try XCTUnwrap(memo)
            XCTAssertTrue(kept.entries.contains { $0.digest == again.exact }, "the wire form is a range of the memo")
        }
        // The wire digest is looked up in `earlier` when the other leg's memo has no equal range: a memo
        // of the same raw bytes whose digest is marked shows where it came from.
        let raw: [UInt8]
        if case .http1(let head) = http1(down) { raw = Array(head) } else { raw = [] }
        let marked = SHA256Digest(bytes: Array(repeating: 0xAB, count: 32))!
        let earlier = raw.withUnsafeBytes { bytes in
            [HeadDigestMemo.Entry(start: 0, count: raw.count, digest: marked)].withUnsafeBufferPointer {
                HeadDigestMemo.make(function: .sha256, input: bytes, entries: $0, section: nil)
            }
        }
        var none: HeadDigestMemo?
        let looked = HeadDigest(request: down, wire: http1(down), connectionScheme: "https", using: .sha256, memo: &none,
                                earlier: earlier, keepingMemo: false)
        XCTAssertEqual(looked.exact, marked)
    }

    func testChangedBytesAndAnotherFunctionAreDigestedAfresh() {
        let original = HTTPResponseHead(status: .ok, fields: ["Server": "s", "ETag": "\"1\"", "Content-Type": "text/plain"])
        var changed = original
        changed.fields.set(HTTPField.Name("ETag"), "\"2\"")
        var memo: HeadDigestMemo?
        _ = HeadDigest(response: original, wire: .http2Response(original), using: .sha256, memo: &memo, keepingMemo: true)
        let kept = memo
        let afterChange = HeadDigest(response: changed, wire: .http2Response(changed), using: .sha256, memo: &memo,
                                     keepingMemo: true)
        XCTAssertEqual(afterChange, HeadDigest(response: changed, wire: .http2Response(changed), using: .sha256))
        XCTAssertNotEqual(afterChange.fields["etag"],
                          HeadDigest(response: original, wire: .http2Response(original), using: .sha256).fields["etag"])
        memo = kept
        let keyed = HeadDigest(response: original, wire: .http2Response(original), using: Self.keyed, memo: &memo,
                               keepingMemo: false)
        XCTAssertEqual(keyed, HeadDigest(response: original, wire: .http2Response(original), using: Self.keyed),
                       "a memo of SHA-256 digests is no memo of HMAC ones")
    }

    func testAMemoAnswersOnlyForEqualBytes() {
        var memo: HeadDigestMemo?
        let head = HTTPResponseHead(status: .ok, fields: ["Server": "s"])
        _ = HeadDigest(response: head, wire: .http2Response(head), using: .sha256, memo: &memo, keepingMemo: true)
        let kept = try! XCTUnwrap(memo)
        for entry in kept.entries {
            Array(kept.input).withUnsafeBytes { bytes in
                let range = UnsafeRawBufferPointer(rebasing: bytes[entry.start..<entry.start + entry.count])
                XCTAssertEqual(kept.digest(of: range, using: .sha256), entry.digest)
                XCTAssertEqual(SHA256Digest(digesting: range, using: .sha256), entry.digest)
                XCTAssertNil(kept.digest(of: range, using: Self.keyed))
                var other = Array(range)
                other[other.count - 1] ^= 1
                other.withUnsafeBytes { XCTAssertNotEqual(kept.digest(of: $0, using: .sha256), entry.digest) }
            }
        }
    }

    func testTheVeryFieldsOfTheMemosHeadReuseItsSection() throws {
        let upstream = HTTPResponseHead(status: .ok, version: .http2,
                                        fields: ["server": "s", "content-length": "5", "connection": "x", "x": "1", "cookie": "a=1"])
        var downstream = upstream.carriedByHTTP1()
        downstream.reason = "OK"
        for function in [DigestFunction.sha256, Self.keyed] {
            var memo: HeadDigestMemo?
            _ = HeadDigest(response: upstream, wire: .http2Response(upstream), using: function, memo: &memo, keepingMemo: true)
            let kept = try XCTUnwrap(memo)
            XCTAssertNotNil(kept.section(holding: downstream.fields, using: function), "one array, shared")
            XCTAssertNotNil(kept.section(holding: HTTPFields(Array(downstream.fields)), using: function), "equal bytes, another array")
            XCTAssertNil(kept.section(holding: downstream.fields, using: function == .sha256 ? Self.keyed : .sha256))
            let wire = HeadDigest.WireForm.http1(head: Array("HTTP/1.1 200 OK\r\nserver: s\r\n".utf8))
            let reused = HeadDigest(response: downstream, wire: wire, using: function, memo: &memo, keepingMemo: false)
            XCTAssertEqual(reused, HeadDigest(response: downstream, wire: wire, using: function))
            XCTAssertEqual(reused.hopByHop, ["connection", "x"])
        }
    }

    /// The next head of fields of the same bytes notes the very section
    /// object again (none made), and its memo holds that head's own array,
    /// so a head relayed with those fields is found by its storage.
    func testAReusedSectionIsOneObjectAndTheMemoHoldsTheNewerFields() throws {
        let first = HTTPResponseHead(status: .ok, version: .http2, fields: ["server": "s", "etag": "\"1\"", "date": String(repeating: "d", count: 29)])
        var memo: HeadDigestMemo?
        _ = HeadDigest(response: first, wire: .http2Response(first), using: .sha256, memo: &memo, keepingMemo: true)
        let kept = try XCTUnwrap(memo)
        let again = HTTPResponseHead(status: .ok, version: .http2, fields: HTTPFields(first.fields.map {
            HTTPField(name: String(decoding: Array($0.name.utf8), as: UTF8.self), value: String(decoding: Array($0.value.utf8), as: UTF8.self))
        }))
        let digest = HeadDigest(response: again, wire: .http2Response(again), using: .sha256, memo: &memo, keepingMemo: true)
        XCTAssertEqual(digest, HeadDigest(response: again, wire: .http2Response(again), using: .sha256))
        let next = try XCTUnwrap(memo)
        XCTAssertTrue(try XCTUnwrap(next.section) === XCTUnwrap(kept.section), "the section object is shared, not made again")
        let held = next.withUnsafeMutablePointerToHeader { $0.pointee.sectionFields }
        XCTAssertTrue(held.fields.withUnsafeBufferPointer { mine in again.fields.fields.withUnsafeBufferPointer { $0.baseAddress == mine.baseAddress } },
                      "the newer head's array")
    }

    /// Ranges of every length up to several 32-byte blocks, equal and with
    /// one byte changed at every place: the block, word and byte compares
    /// all find the change.
    func testRangesAreEqualOnlyWithEveryByteEqual() {
        for count in 0...80 {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            var other = bytes
            bytes.withUnsafeBytes { a in
                other.withUnsafeBytes { b in
                    XCTAssertTrue(count == 0 || HeadDigestMemo.equal(a.baseAddress!, b.baseAddress!, count: count), "\(count)")
                }
            }
            for position in 0..<count {
                other[position] ^= 0x40
                bytes.withUnsafeBytes { a in
                    other.withUnsafeBytes { b in
                        XCTAssertFalse(HeadDigestMemo.equal(a.baseAddress!, b.baseAddress!, count: count), "\(count) at \(position)")
                    }
                }
                other[position] ^= 0x40
            }
        }
    }

    func testFieldsOfTheSameBytesInAnotherArrayReuseTheSectionAndNoOthersDo() throws {
        let fields: HTTPFields = ["Server": "s", "Content-Type": "text/html", "Connection": "x", "X": "caf\u{E9}"]
        let first = HTTPResponseHead(status: .ok, fields: fields)
        var memo: HeadDigestMemo?
        _ = HeadDigest(response: first, wire: .http2Response(first), using: .sha256, memo: &memo, keepingMemo: true)
        let kept = try XCTUnwrap(memo)
        var copy = Array(fields)
        copy[0].name = String(decoding: Array("Server".utf8), as: UTF8.self)  // other storage, same bytes
        XCTAssertNotNil(kept.section(holding: HTTPFields(copy), using: .sha256))
        let others: [[HTTPField]] = [
            Array(fields.dropLast()),                                                   // one field fewer
            Array(fields) + [HTTPField(name: "Via", value: "1.1 p")],                   // one more
            Array(fields).enumerated().map { $0.offset == 1 ? HTTPField(name: "Content-Type", value: "text/htmm") : $0.element },
            Array(fields).enumerated().map { $0.offset == 0 ? HTTPField(name: "server", value: "s") : $0.element },  // case
            Array(fields).reversed(),                                                   // order
            // Canonically equivalent (`==` as `String`s) but other bytes, so another digest input.
            Array(fields).enumerated().map { $0.offset == 3 ? HTTPField(name: "X", value: "cafe\u{301}") : $0.element },
        ]
        for other in others {
            XCTAssertNil(kept.section(holding: HTTPFields(other), using: .sha256), "\(other)")
            var reading = Optional(kept)
            let head = HTTPResponseHead(status: .ok, fields: HTTPFields(other))
            XCTAssertEqual(HeadDigest(response: head, wire: .http2Response(head), using: .sha256, memo: &reading, keepingMemo: false),
                           HeadDigest(response: head, wire: .http2Response(head), using: .sha256), "\(other)")
        }
    }
}
