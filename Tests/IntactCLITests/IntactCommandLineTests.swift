import XCTest
@testable import IntactCLI

final class IntactCommandLineTests: XCTestCase {
    func testVersion() {
        let run = intact(["--version"])
        XCTAssertEqual(run.status, 0)
        XCTAssertEqual(run.output, "intact \(IntactVersion.string)\n")
        XCTAssertEqual(run.error, "")
    }

    func testNoCommandIsAUsageError() {
        let run = intact([])
        XCTAssertEqual(run.status, 2)
        XCTAssertTrue(run.error.hasPrefix("intact: missing command\n\nUsage: intact [<command>] [options]\n"), run.error)
        XCTAssertTrue(run.error.contains("  ca "), run.error)
    }

    func testUnknownCommandAndOptionNameThemAndShowUsage() {
        let unknown = intact(["bogus"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertTrue(unknown.error.hasPrefix("intact: unknown command 'bogus' for 'intact'\n\nUsage: intact "), unknown.error)
        let option = intact(["ca", "init", "--force"])
        XCTAssertEqual(option.status, 2)
        XCTAssertTrue(option.error.hasPrefix("intact: unknown option '--force' for 'intact ca init'\n\nUsage: intact ca init [options]\n"),
                      option.error)
    }

    /// Every command and subcommand answers `-h` and `--help` on standard
    /// output with its usage, listing each option with its help and default.
    func testEveryCommandHasHelpDescribingEachOption() {
        var paths = [CommandPath(commands: [CommandRegistry.root])]
        var index = 0
        while index < paths.count {
            paths += paths[index].command.subcommands.map { paths[index].appending($0) }
            index += 1
        }
        XCTAssertGreaterThanOrEqual(paths.count, 5)
        for path in paths {
            let words = path.commands.dropFirst().map(\.name)
            for help in ["--help", "-h"] {
                let run = intact(words + [help])
                XCTAssertEqual(run.status, 0, "\(path) \(help)")
                XCTAssertEqual(run.error, "")
                XCTAssertTrue(run.output.hasPrefix("Usage: \(path)"), run.output)
                XCTAssertTrue(run.output.contains(path.command.summary), run.output)
                for option in path.command.options {
                    XCTAssertTrue(run.output.contains(option.synopsis), "\(path): \(option.synopsis)")
                    XCTAssertTrue(run.output.contains(option.help), "\(path): \(option.help)")
                    if let defaultValue = option.shownDefault {
                        XCTAssertTrue(run.output.contains("(default: \(defaultValue))"), "\(path): \(option.long)")
                    }
                }
                for subcommand in path.command.subcommands {
                    XCTAssertTrue(run.output.contains("  \(subcommand.name) "), "\(path) lists \(subcommand.name)")
                }
            }
        }
    }

    func testCAHelpStatesDefaults() {
        let run = intact(["ca", "issue-client", "--help"])
        XCTAssertTrue(run.output.contains("password that protects the PKCS#12 file (default: intact)"), run.output)
        XCTAssertTrue(run.output.contains("directory of the development CA (default: $XDG_DATA_HOME/intact, else ~/.local/share/intact)"),
                      run.output)
        XCTAssertTrue(run.output.contains("(default: 365)"), run.output)
    }
}
