import ConfigurationFile
import XCTest

/// The reader every configuration file goes through: positions, paths,
/// the allowed fields of an unknown one, and the file named in every error.
final class JSONFieldReaderTests: XCTestCase {
    private enum Color: String, CaseIterable { case red, green }

    private func reader(_ text: String, allowed: [String]) throws -> JSONFieldReader {
        try JSONFieldReader(LocatedJSON.parse(Array(text.utf8)), path: "", allowed: allowed)
    }

    private func error(_ body: () throws -> Void) -> ConfigurationError? {
        do {
            try body()
            XCTFail("no error")
        } catch let error as ConfigurationError {
            return error
        } catch {
            XCTFail("\(error)")
        }
        return nil
    }

    func testNestedObjectsAndArraysCarryTheirPathsAndPositions() throws {
        let top = try reader("""
            {"name": "n",
             "items": [{"color": "red"}, {"color": "blue"}]}
            """, allowed: ["name", "items"])
        XCTAssertEqual(try top.name("name"), "n")
        let items = try XCTUnwrap(try top.objects("items", allowed: ["color"]))
        XCTAssertEqual(try items[0].choice("color", Color.self), .red)
        let bad = error { _ = try items[1].choice("color", Color.self) }
        XCTAssertEqual(bad, ConfigurationError(kind: .unknownValue("blue", allowed: ["red", "green"]),
                                               position: SourcePosition(line: 2, column: 40), path: "items[1].color"))
    }

    func testAnUnknownFieldListsTheAllowedOnesAndTheFileLineAndColumn() throws {
        let unknown = error {
            try ConfigurationError.inFile("c.json") { () throws(ConfigurationError) in
                let top = try JSONFieldReader(LocatedJSON.parse(Array("{\"a\": {\n  \"x\": 1}}".utf8)), path: "", allowed: ["a"])
                _ = try top.object("a", allowed: ["y", "z"])
            }
        }
        XCTAssertEqual(unknown?.description, "c.json:2:3: at a: unknown field \"x\" (allowed: y, z)")
        let syntax = error { _ = try ConfigurationError.inFile("s.json") { () throws(ConfigurationError) in try LocatedJSON.parse(Array("{,}".utf8)) } }
        XCTAssertEqual(syntax?.position, SourcePosition(line: 1, column: 2))
        XCTAssertTrue(syntax?.description.hasPrefix("s.json:1:2: not valid JSON: ") == true, syntax?.description ?? "")
        XCTAssertEqual(ConfigurationError(kind: .unreadable("No such file"), position: nil, path: "", file: "p.json").description,
                       "p.json: cannot read: No such file")
    }

    func testTypesAreChecked() throws {
        let top = try reader(#"{"n": "3", "list": 4, "flag": 1}"#, allowed: ["n", "list", "flag"])
        XCTAssertEqual(error { _ = try top.int("n", in: 0...5) }?.kind, .wrongType(expected: "an integer", found: "a string"))
        XCTAssertEqual(error { _ = try top.array("list") }?.kind, .wrongType(expected: "an array", found: "a number"))
        XCTAssertEqual(error { _ = try top.bool("flag") }?.kind, .wrongType(expected: "true or false", found: "a number"))
        XCTAssertEqual(error { _ = try top.required("missing", top.string) }?.kind, .missingField("missing"))
        XCTAssertEqual(error { _ = try reader("[]", allowed: []) }?.kind, .wrongType(expected: "an object", found: "an array"))
    }
}
