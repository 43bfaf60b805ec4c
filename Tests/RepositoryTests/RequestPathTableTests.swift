import Foundation
import XCTest

/// The README's "One request, end to end" table stays true: at most six
/// places (issue 30's bound for a newcomer following one request), numbered
/// in order, and every source file it names exists.
final class RequestPathTableTests: XCTestCase {
    /// One row of the table: its number and the files its third column names.
    struct Place: Equatable {
        var number: Int
        var files: [String]
    }

    /// The rows of the table under `### One request, end to end` in `markdown`.
    /// A file name with a `/` sets the directory for the bare names after it
    /// in the same cell; backticked words not ending in `.swift` are not files.
    static func places(in markdown: String) -> [Place] {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false)
        guard let heading = lines.firstIndex(where: { $0.hasPrefix("### One request, end to end") }) else { return [] }
        var places: [Place] = []
        for line in lines[(heading + 1)...] {
            if line.hasPrefix("#") { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 5, let number = Int(cells[1]) else { continue }
            var directory = ""
            var files: [String] = []
            for (index, token) in cells[3].split(separator: "`", omittingEmptySubsequences: false).enumerated()
            where index % 2 == 1 && token.hasSuffix(".swift") {
                let name = String(token)
                if let slash = name.lastIndex(of: "/") {
                    directory = String(name[...slash])
                    files.append(name)
                } else {
                    files.append(directory + name)
                }
            }
            places.append(Place(number: number, files: files))
        }
        return places
    }

    func testTheREADMEFollowsOneRequestThroughAtMostSixPlacesThatExist() throws {
        let readme = try String(contentsOf: RepositoryFiles.root.appendingPathComponent("README.md"), encoding: .utf8)
        let places = Self.places(in: readme)
        guard !places.isEmpty else { return XCTFail("README.md has no table under ### One request, end to end") }
        XCTAssertLessThanOrEqual(places.count, 6)
        XCTAssertEqual(places.map(\.number), Array(1...places.count))
        for place in places {
            XCTAssertFalse(place.files.isEmpty, "place \(place.number) names its files")
            for file in place.files {
                XCTAssertTrue(FileManager.default.fileExists(atPath: RepositoryFiles.root.appendingPathComponent(file).path),
                              "place \(place.number): \(file) does not exist")
            }
        }
    }

    func testTheTableReaderResolvesBareNamesAgainstTheCellsDirectory() {
        let markdown = """
        ### One request, end to end: six places
        | # | place | files | what |
        |---|---|---|---|
        | 1 | a | `Sources/A/One.swift`, `Two.swift` (+`Extra`) | x |
        | 2 | b | `Sources/B/Three.swift`, over `Sources/C/Four.swift` or `Five.swift` | y |
        ## Next
        | 3 | c | `Sources/D/Six.swift` | z |
        """
        XCTAssertEqual(Self.places(in: markdown), [
            Place(number: 1, files: ["Sources/A/One.swift", "Sources/A/Two.swift"]),
            Place(number: 2, files: ["Sources/B/Three.swift", "Sources/C/Four.swift", "Sources/C/Five.swift"]),
        ])
    }
}
