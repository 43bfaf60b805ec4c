import XCTest
@testable import Browser

final class CDPFramerTests: XCTestCase {
    func testSplitsMessagesOnNULWhateverTheChunking() throws {
        let stream = Array("{\"id\":1}\0{\"method\":\"A.b\"}\0{\"id\":2}\0".utf8)
        for chunkSize in [1, 2, 3, 7, stream.count] {
            var framer = CDPFramer()
            var messages: [String] = []
            var offset = 0
            while offset < stream.count {
                framer.append(stream[offset..<min(offset + chunkSize, stream.count)])
                offset += chunkSize
                while let message = try framer.next() { messages.append(String(decoding: message, as: UTF8.self)) }
            }
            XCTAssertEqual(messages, ["{\"id\":1}", "{\"method\":\"A.b\"}", "{\"id\":2}"], "chunks of \(chunkSize)")
            XCTAssertEqual(framer.pendingByteCount, 0)
        }
    }

    func testKeepsAnUnfinishedMessageUntilItsNULArrives() throws {
        var framer = CDPFramer()
        framer.append(Array("{\"id\":".utf8))
        XCTAssertNil(try framer.next())
        XCTAssertEqual(framer.pendingByteCount, 6)
        framer.append(Array("7}\0".utf8))
        XCTAssertEqual(try framer.next().map { String(decoding: $0, as: UTF8.self) }, "{\"id\":7}")
        XCTAssertNil(try framer.next())
    }

    func testAnEmptyMessageIsReturnedAsSuch() throws {
        var framer = CDPFramer()
        framer.append([0, 0x41, 0])
        XCTAssertEqual(try framer.next(), [])
        XCTAssertEqual(try framer.next(), [0x41])
    }

    func testRefusesAMessageLongerThanTheLimit() {
        var framer = CDPFramer(limit: 8)
        framer.append(Array("123456789".utf8))
        XCTAssertThrowsError(try framer.next()) { error in
            XCTAssertEqual(error as? CDPFramer.Failure, .messageTooLarge(length: 9, limit: 8))
            XCTAssertTrue("\(error)".contains("exceeded 8 bytes"))
        }
    }

    func testAMessageAtTheLimitPasses() throws {
        var framer = CDPFramer(limit: 3)
        framer.append(Array("abc\0".utf8))
        XCTAssertEqual(try framer.next(), Array("abc".utf8))
    }

    func testFrameAppendsTheTerminator() {
        XCTAssertEqual(CDPFramer.frame([0x7B, 0x7D]), [0x7B, 0x7D, 0])
    }
}

final class CDPMessageTests: XCTestCase {
    private func parse(_ text: String) throws -> CDPMessage {
        try CDPMessage.parse(Array(text.utf8))
    }

    func testParsesAnAnswerWithItsSession() throws {
        guard case .response(let id, let session, .success(let result)) = try parse(#"{"id":4,"result":{"targetId":"T1"},"sessionId":"S"}"#) else {
            return XCTFail("not a successful answer")
        }
        XCTAssertEqual(id, 4)
        XCTAssertEqual(session, "S")
        XCTAssertEqual(result["targetId"]?.string, "T1")
    }

    func testParsesAnErrorAnswer() throws {
        guard case .response(7, nil, .failure(let error)) = try parse(#"{"id":7,"error":{"code":-32601,"message":"'Fetch.enable' wasn't found"}}"#) else {
            return XCTFail("not an error answer")
        }
        XCTAssertEqual(error.code, -32601)
        XCTAssertEqual(error.description, "'Fetch.enable' wasn't found (DevTools error -32601)")
    }

    func testParsesAnEventKeepingHeaderOrder() throws {
        guard case .event(let method, let session, let params) = try parse(
            #"{"method":"Network.responseReceived","params":{"response":{"headers":{"b":"2","a":"1","n":5}}},"sessionId":"S"}"#) else {
            return XCTFail("not an event")
        }
        XCTAssertEqual(method, "Network.responseReceived")
        XCTAssertEqual(session, "S")
        let pairs = params["response"]?["headers"]?.stringPairs ?? []
        XCTAssertEqual(pairs.map(\.name), ["b", "a"], "order kept, the number skipped")
    }

    func testAnAnswerWithoutResultIsAnEmptyObject() throws {
        guard case .response(1, nil, .success(let result)) = try parse(#"{"id":1}"#) else { return XCTFail() }
        XCTAssertEqual(result.typeName, "an object")
    }

    func testRefusesWhatIsNotADevToolsMessage() {
        for (text, expected) in [("not json", "not JSON"), ("[1]", "an array, not an object"),
                                 (#"{"id":"x"}"#, "id is a string"), (#"{"params":{}}"#, "neither an id nor a method"),
                                 (#"{"id":1.5}"#, "not an integer")] {
            XCTAssertThrowsError(try parse(text), text) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(text): \(error)")
            }
        }
    }

    func testEncodesACommandWithTheProjectsWriter() {
        let command = CDPCommand(id: 3, method: "Page.navigate",
                                 params: .object(["url": .string("https://h/\"x\""), "n": .int(2), "f": .bool(false),
                                                  "list": .array([.object(["a": .string("b")])])]),
                                 sessionID: "S1")
        XCTAssertEqual(String(decoding: command.encoded, as: UTF8.self),
                       #"{"id":3,"method":"Page.navigate","params":{"url":"https://h/\"x\"","n":2,"f":false,"list":[{"a":"b"}]},"sessionId":"S1"}"#)
        XCTAssertEqual(String(decoding: CDPCommand(id: 1, method: "Target.getTargets").encoded, as: UTF8.self),
                       #"{"id":1,"method":"Target.getTargets","params":{}}"#)
    }

    func testTheFormScriptQuotesCredentialsAsStringLiterals() {
        let script = BrowserFormScript.source(username: "d\"e\\mo", password: "p\u{2028}w")
        XCTAssertTrue(script.contains(#"type(user, "d\"e\\mo")"#))
        XCTAssertTrue(script.contains(#"type(password, "p\u2028w")"#))
    }
}
