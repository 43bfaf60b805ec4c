import Foundation
import XCTest
@testable import IntactCLI

/// The options of the test's `fetch` command: one of each kind.
private struct FetchOptions: OptionGroup {
    let dir = Option.value("dir", short: "d", .string("DIR"), help: "where", default: "certs")
    let verbose = Option.flag("verbose", short: "v", help: "talk more")
    let header = Option.repeatable("header", short: "H", .string("FIELD"), help: "a header")
    let out = Option.required("out", .string("FILE"), help: "output file")
    let count = Option.optional("count", .integer(in: 1...10), help: "how many")
    let limit = Option.optionalValue("limit", .byteSize("SIZE"), whenAlone: 1024, help: "a size")
}

final class ArgumentParserTests: XCTestCase {
    private let options = FetchOptions()

    private let fetch = Command(
        name: "fetch", summary: "Fetch things.",
        arguments: [CommandArgument("URL", help: "what to fetch"),
                    CommandArgument("MORE", help: "more of it", arity: .zeroOrMore)],
        options: FetchOptions(),
        run: { _, _ in 0 })

    private var parser: ArgumentParser {
        let optional = Command(name: "peek", summary: "Peek.", arguments: [CommandArgument("PATH", help: "p", arity: .optional)],
                               run: { _, _ in 0 })
        let tool = Command(name: "tool", summary: "Tools.", subcommands: [fetch, optional])
        return ArgumentParser(root: Command(name: "intact", summary: "Root.", subcommands: [tool]))
    }

    private func parse(_ words: [String], file: StaticString = #filePath, line: UInt = #line) throws -> ParsedArguments {
        guard case let .run(parsed) = try parser.parse(words) else {
            XCTFail("expected a command to run", file: file, line: line)
            throw UsageError("no run", path: CommandPath(commands: [parser.root]))
        }
        return parsed
    }

    /// The usage error's message and the command it names.
    private func usageError(_ words: [String], file: StaticString = #filePath, line: UInt = #line) -> (String, String)? {
        do {
            _ = try parser.parse(words)
            XCTFail("\(words) parsed", file: file, line: line)
        } catch let error as UsageError {
            return (error.message, error.path.description)
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
        return nil
    }

    func testOptionsInEveryFormAndPositionals() throws {
        let parsed = try parse(["tool", "fetch", "u", "--dir", "D", "--out=o", "-v", "-H", "a", "--header=b", "-Hc",
                                "m1", "m2"])
        XCTAssertEqual(parsed.path.description, "intact tool fetch")
        XCTAssertEqual(parsed[options.dir], "D")
        XCTAssertEqual(parsed[options.out], "o")
        XCTAssertTrue(parsed[options.verbose])
        XCTAssertEqual(parsed[options.header], ["a", "b", "c"])
        XCTAssertEqual(parsed.argument("URL"), "u")
        XCTAssertEqual(parsed.arguments("MORE"), ["m1", "m2"])
        XCTAssertTrue(parsed.isGiven(options.dir))
    }

    func testDefaultsAndAbsentOptions() throws {
        let parsed = try parse(["tool", "fetch", "--out", "o", "u"])
        XCTAssertEqual(parsed[options.dir], "certs")
        XCTAssertFalse(parsed.isGiven(options.dir))
        XCTAssertFalse(parsed[options.verbose])
        XCTAssertEqual(parsed[options.header], [])
        XCTAssertNil(parsed[options.limit])
        XCTAssertNil(parsed[options.count])
        XCTAssertEqual(parsed.arguments("MORE"), [])
        XCTAssertNil(try parse(["tool", "peek"]).argument("PATH"))
        XCTAssertEqual(try parse(["tool", "peek", "p"]).argument("PATH"), "p")
    }

    func testShortOptionsWithAttachedValues() throws {
        XCTAssertEqual(try parse(["tool", "fetch", "--out", "o", "u", "-dX"])[options.dir], "X")
        XCTAssertEqual(try parse(["tool", "fetch", "--out", "o", "u", "-d=Y"])[options.dir], "Y")
    }

    func testDoubleDashDashAndNumbersAreValues() throws {
        let parsed = try parse(["tool", "fetch", "--out", "o", "--", "--dir", "-v"])
        XCTAssertEqual(parsed.argument("URL"), "--dir")
        XCTAssertEqual(parsed.arguments("MORE"), ["-v"])
        XCTAssertEqual(parsed[options.dir], "certs")
        XCTAssertEqual(try parse(["tool", "fetch", "--out", "o", "-"]).argument("URL"), "-")
        XCTAssertEqual(try parse(["tool", "fetch", "--out=--odd", "u"])[options.out], "--odd")
        XCTAssertEqual(usageError(["tool", "fetch", "--out", "o", "u", "--count", "-5"])?.0,
                       "option --count expects a whole number from 1 to 10, got '-5'", "a negative number is a value")
    }

    func testValuesAreConvertedAndCheckedWhenParsed() throws {
        XCTAssertEqual(try parse(["tool", "fetch", "--out", "o", "u", "--count", "7"])[options.count], 7)
        for bad in ["0", "11", "seven", "7.5"] {
            XCTAssertEqual(usageError(["tool", "fetch", "--out", "o", "u", "--count", bad])?.0,
                           "option --count expects a whole number from 1 to 10, got '\(bad)'")
        }
        XCTAssertEqual(try parse(["tool", "fetch", "--out", "o", "u", "--limit"])[options.limit], 1024)
        XCTAssertEqual(try parse(["tool", "fetch", "--out", "o", "u", "--limit=2K"])[options.limit], 2048)
        XCTAssertEqual(usageError(["tool", "fetch", "--out", "o", "u", "--limit=lots"])?.0,
                       "option --limit expects a size such as 65536, 64K or 1M, got 'lots'")
    }

    func testEveryOptionOfEveryCommandIsDeclaredOnceAndResolves() throws {
        // Builds every command (Command.init refuses a name declared twice) and
        // parses each runnable one with its defaults: every default resolves to its type.
        func visit(_ path: CommandPath) {
            let command = path.command
            XCTAssertEqual(Set(command.options.map(\.long)).count, command.options.count, "\(path)")
            for option in command.options where !option.isRequired {
                XCTAssertNoThrow(try option.resolve([]), "\(path) --\(option.long)")
            }
            for subcommand in command.subcommands { visit(path.appending(subcommand)) }
        }
        visit(CommandPath(commands: [CommandRegistry.root]))
        XCTAssertEqual(FetchOptions().declarations.map(\.long), ["dir", "verbose", "header", "out", "count", "limit"],
                       "declaration order is --help order")
    }

    func testEveryMalformedCommandLineIsAUsageErrorNamingTheProblem() {
        let cases: [([String], String, String)] = [
            (["tool", "fetch", "u", "--out", "o", "--bogus"], "unknown option '--bogus' for 'intact tool fetch'",
             "intact tool fetch"),
            (["tool", "fetch", "u", "--out", "o", "-x"], "unknown option '-x' for 'intact tool fetch'", "intact tool fetch"),
            (["tool", "fetch", "u", "--out"], "option --out needs a value (FILE)", "intact tool fetch"),
            (["tool", "fetch", "u", "--dir", "--out", "o"], "option --dir needs a value (DIR)", "intact tool fetch"),
            (["tool", "fetch", "u", "-d"], "option -d needs a value (DIR)", "intact tool fetch"),
            (["tool", "fetch", "u", "--out="], "option --out needs a non-empty value (FILE)", "intact tool fetch"),
            (["tool", "fetch", "u", "--out", "o", "--verbose=yes"], "option --verbose is a flag and takes no value",
             "intact tool fetch"),
            (["tool", "fetch", "u", "--out", "o", "-v", "-v"], "option -v given more than once", "intact tool fetch"),
            (["tool", "fetch", "u", "--out", "o", "--dir", "a", "-d", "b"], "option -d given more than once",
             "intact tool fetch"),
            (["tool", "fetch", "u"], "missing option --out FILE", "intact tool fetch"),
            (["tool", "fetch", "--out", "o"], "missing argument URL", "intact tool fetch"),
            (["tool", "peek", "a", "b"], "unexpected argument 'b' for 'intact tool peek'", "intact tool peek"),
            (["tool", "nope"], "unknown command 'nope' for 'intact tool'", "intact tool"),
            (["tool"], "missing command for 'intact tool'", "intact tool"),
            (["tool", "--dir", "x", "fetch"], "unknown option '--dir' for 'intact tool'", "intact tool"),
            ([], "missing command for 'intact'", "intact"),
        ]
        for (words, message, path) in cases {
            guard let (reported, reportedPath) = usageError(words) else { continue }
            XCTAssertEqual(reported, message, "\(words)")
            XCTAssertEqual(reportedPath, path, "\(words)")
        }
    }

    func testHelpWinsAnywhereBeforeDoubleDash() throws {
        for words in [["tool", "fetch", "--help"], ["tool", "fetch", "--bogus", "-h"], ["tool", "fetch", "-h", "--out"]] {
            guard case let .help(path) = try parser.parse(words) else { return XCTFail("\(words)") }
            XCTAssertEqual(path.description, "intact tool fetch")
        }
        guard case let .help(group) = try parser.parse(["tool", "-h"]) else { return XCTFail("group help") }
        XCTAssertEqual(group.description, "intact tool")
        guard case let .help(root) = try parser.parse(["--help", "tool"]) else { return XCTFail("root help") }
        XCTAssertEqual(root.description, "intact tool")
        guard case let .run(parsed) = try parser.parse(["tool", "fetch", "--out", "o", "--", "--help"]) else {
            return XCTFail("--help after -- is a positional")
        }
        XCTAssertEqual(parsed.argument("URL"), "--help")
    }

    func testUsageDescribesEveryOptionWithDefaults() throws {
        guard case let .help(path) = try parser.parse(["tool", "fetch", "-h"]) else { return XCTFail("help") }
        let usage = Usage.render(path)
        let lines = usage.split(separator: "\n").map(String.init)
        func line(_ left: String) -> String? {
            lines.first { $0.hasPrefix("  " + left + " ") }
                .map { $0.dropFirst(2 + left.count).trimmingCharacters(in: .whitespaces) }
        }
        XCTAssertTrue(usage.hasPrefix("Usage: intact tool fetch URL [MORE...] --out FILE [options]\n\nFetch things.\n"), usage)
        XCTAssertEqual(line("URL"), "what to fetch")
        XCTAssertEqual(line("[MORE...]"), "more of it")
        XCTAssertEqual(line("-d, --dir DIR"), "where (default: certs)")
        XCTAssertEqual(line("-v, --verbose"), "talk more")
        XCTAssertEqual(line("-H, --header FIELD"), "a header (repeatable)")
        XCTAssertEqual(line("--out FILE"), "output file (required)")
        XCTAssertEqual(line("--count N"), "how many")
        XCTAssertEqual(line("-h, --help"), "show this help")

        guard case let .help(group) = try parser.parse(["tool", "--help"]) else { return XCTFail("help") }
        let groupUsage = Usage.render(group)
        XCTAssertTrue(groupUsage.hasPrefix("Usage: intact tool <command>\n"), groupUsage)
        XCTAssertTrue(groupUsage.contains("Commands:\n  fetch  Fetch things.\n  peek   Peek.\n"), groupUsage)
        XCTAssertTrue(groupUsage.contains("Run 'intact tool <command> --help' for a command's options."), groupUsage)
    }
}
