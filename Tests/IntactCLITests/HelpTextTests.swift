import Foundation
@testable import IntactCLI
import XCTest

/// The `--help` of every command, read as a user reads it.
final class HelpTextTests: XCTestCase {
    /// Every command path under `intact`, the root included.
    private func everyPath() -> [CommandPath] {
        var paths: [CommandPath] = []
        func walk(_ path: CommandPath) {
            paths.append(path)
            for sub in path.command.subcommands { walk(path.appending(sub)) }
        }
        walk(CommandPath(commands: [CommandRegistry.root]))
        return paths
    }

    /// The words of a text, lowercased, with punctuation around them dropped.
    static func words(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).map {
            $0.trimmingCharacters(in: .punctuationCharacters.union(.symbols)).lowercased()
        }.filter { !$0.isEmpty }
    }

    /// The first word a text says twice in a row, if any.
    static func repeatedWord(_ text: String) -> String? {
        let words = words(text)
        return zip(words, words.dropFirst()).first { $0 == $1 }?.0
    }

    func testTheRepeatCheckFindsARepeat() {
        XCTAssertEqual(Self.repeatedWord("tunnel it (repeatable) (repeatable)"), "repeatable")
        XCTAssertEqual(Self.repeatedWord("the the host"), "the")
        XCTAssertNil(Self.repeatedWord("tunnel this host (repeatable)"))
    }

    func testNoOptionsHelpRepeatsAWordBackToBack() {
        var problems: [String] = []
        for path in everyPath() {
            for option in path.command.options {
                let shown = Usage.right(of: option)
                XCTAssertTrue(Usage.render(path).contains(shown), "\(path) --\(option.long): the checked text is what --help prints")
                if let word = Self.repeatedWord(shown) { problems.append("\(path) --\(option.long): \"\(word) \(word)\" in: \(shown)") }
            }
        }
        XCTAssertGreaterThan(everyPath().count, 10, "every command was walked")
        XCTAssertEqual(problems, [], problems.joined(separator: "\n"))
    }

    func testHelpExamplesUseOnlyLoopbackAddresses() throws {
        let ipv4 = try NSRegularExpression(pattern: #"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b"#)
        var problems: [String] = []
        for path in everyPath() {
            let usage = Usage.render(path)
            for match in ipv4.matches(in: usage, range: NSRange(usage.startIndex..., in: usage)) {
                let address = String(usage[Range(match.range, in: usage)!])
                if !address.hasPrefix("127.") { problems.append("\(path): \(address)") }
            }
        }
        XCTAssertEqual(problems, [], problems.joined(separator: "\n"))
    }
}
