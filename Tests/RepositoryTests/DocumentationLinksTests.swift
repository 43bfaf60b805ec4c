import Foundation
import XCTest

/// Every link of the documentation leads somewhere: relative Markdown links
/// name files that exist (and headings that exist, for `#anchors`), and the
/// documentation files the sources and `--help` texts name exist.
final class DocumentationLinksTests: XCTestCase {
    /// The Markdown files of the documentation, relative to the repository.
    static func documents() throws -> [String] {
        try RepositoryFiles.tracked().filter { path in
            path.hasSuffix(".md") && (path == "README.md" || path.hasPrefix("Docs/") || path.hasPrefix("Examples/")
                                      || path.hasPrefix("Benchmarks/") || path.hasPrefix("certs/"))
        }
    }

    /// GitHub's anchor for a heading: lowercased, punctuation dropped, spaces as dashes.
    static func anchor(_ heading: String) -> String {
        String(heading.lowercased().compactMap { character -> Character? in
            if character == " " { return "-" }
            if character.isLetter || character.isNumber || character == "-" || character == "_" { return character }
            return nil
        })
    }

    /// The anchors of the headings of a Markdown text (outside code blocks).
    static func anchors(in text: String) -> Set<String> {
        var inCode = false
        var found: Set<String> = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inCode.toggle() }
            guard !inCode, line.hasPrefix("#") else { continue }
            found.insert(anchor(line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)))
        }
        return found
    }

    /// `[text](target)` links outside code blocks and code spans.
    static func links(in text: String) throws -> [String] {
        let link = try NSRegularExpression(pattern: #"\]\(([^)\s]+)\)"#)
        var inCode = false
        var targets: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inCode.toggle() }
            guard !inCode else { continue }
            let prose = line.split(separator: "`", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset % 2 == 0 }.map(\.element).joined(separator: " ")
            for match in link.matches(in: prose, range: NSRange(prose.startIndex..., in: prose)) {
                if let range = Range(match.range(at: 1), in: prose) { targets.append(String(prose[range])) }
            }
        }
        return targets
    }

    func testEveryRelativeLinkLeadsToAFileAndHeadingThatExist() throws {
        let documents = try Self.documents()
        XCTAssertTrue(documents.contains("README.md"))
        XCTAssertTrue(documents.contains("Docs/recording-format.md"), "the reference is in Docs/")
        var broken: [String] = []
        var checked = 0
        for document in documents {
            let base = RepositoryFiles.root.appendingPathComponent(document).deletingLastPathComponent()
            let text = try String(contentsOf: RepositoryFiles.root.appendingPathComponent(document), encoding: .utf8)
            for target in try Self.links(in: text) where !target.contains("://") && !target.hasPrefix("mailto:") {
                checked += 1
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let file = parts[0].isEmpty ? RepositoryFiles.root.appendingPathComponent(document)
                    : base.appendingPathComponent(String(parts[0])).standardizedFileURL
                guard FileManager.default.fileExists(atPath: file.path) else {
                    broken.append("\(document): \(target) (no such file)")
                    continue
                }
                if parts.count == 2, file.pathExtension == "md" {
                    let heading = String(parts[1])
                    let targetText = try String(contentsOf: file, encoding: .utf8)
                    if !Self.anchors(in: targetText).contains(heading) {
                        broken.append("\(document): \(target) (no heading #\(heading))")
                    }
                }
            }
        }
        XCTAssertGreaterThan(checked, 10, "the links were found")
        XCTAssertEqual(broken, [], broken.joined(separator: "\n"))
    }

    /// The sources (and Package.swift) name documentation files that exist,
    /// and headings in them that exist (`Docs/performance.md#digests`).
    func testTheDocumentationFilesTheSourcesNameExist() throws {
        let mention = try NSRegularExpression(pattern: #"((?:Docs|Examples)/[\w./-]+\.(?:md|txt))(?:#([\w-]+))?"#)
        var missing: [String] = []
        var anchored = 0
        for path in try RepositoryFiles.tracked()
        where path == "Package.swift" || (path.hasPrefix("Sources/") && path.hasSuffix(".swift")) {
            let text = try String(contentsOf: RepositoryFiles.root.appendingPathComponent(path), encoding: .utf8)
            for match in mention.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                guard let range = Range(match.range(at: 1), in: text) else { continue }
                let named = String(text[range])
                let file = RepositoryFiles.root.appendingPathComponent(named)
                guard FileManager.default.fileExists(atPath: file.path) else {
                    missing.append("\(path) names \(named)")
                    continue
                }
                if let anchorRange = Range(match.range(at: 2), in: text) {
                    anchored += 1
                    let heading = String(text[anchorRange])
                    if !Self.anchors(in: try String(contentsOf: file, encoding: .utf8)).contains(heading) {
                        missing.append("\(path) names \(named)#\(heading) (no such heading)")
                    }
                }
            }
        }
        XCTAssertGreaterThan(anchored, 5, "the links to Docs/performance.md were found")
        XCTAssertEqual(missing, [], missing.joined(separator: "\n"))
    }

    /// Benchmarks/README.md says how to run the bench, what each row means and
    /// the latest table; the history of passes lives in git, not in it.
    func testTheBenchmarksREADMEStaysShort() throws {
        let text = try String(contentsOf: RepositoryFiles.root.appendingPathComponent("Benchmarks/README.md"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
        XCTAssertLessThan(lines, 300, "Benchmarks/README.md has \(lines) lines: move measurements to Docs/performance.md or git history")
        for heading in ["how-to-run", "what-each-row-means", "latest-results"] {
            XCTAssertTrue(Self.anchors(in: text).contains(heading), "Benchmarks/README.md lacks ## \(heading)")
        }
    }

    func testTheAnchorAndLinkReadersMatchGitHub() throws {
        XCTAssertEqual(Self.anchor("Verification: `intact verify`"), "verification-intact-verify")
        XCTAssertEqual(Self.anchor("What `make demo` shows"), "what-make-demo-shows")
        XCTAssertEqual(try Self.links(in: "see [a](x.md#b) and `[c](not-a-link)`\n```\n[d](code)\n```\n"), ["x.md#b"])
    }
}
