import Foundation
import XCTest

/// Package.swift stays true: each target depends on exactly the modules of
/// this package its sources import, so the layer description can be read off it.
final class PackageDependencyTests: XCTestCase {
    struct Target {
        let name: String
        let kind: String
        let dependencies: Set<String>
        let path: String
    }

    /// The targets declared in Package.swift (its own, regular syntax: one `.target(name:dependencies:path:)` call each).
    static func targets() throws -> (targets: [Target], systemLibraries: Set<String>) {
        let manifest = try String(contentsOf: RepositoryFiles.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let call = try NSRegularExpression(pattern: #"\.(target|executableTarget|testTarget)\(name:\s*"([\w-]+)"(?:,\s*dependencies:\s*\[([^\]]*)\])?(?:,\s*path:\s*"([^"]+)")?"#)
        let quoted = try NSRegularExpression(pattern: #""([\w-]+)""#)
        let system = try NSRegularExpression(pattern: #"\.systemLibrary\(name:\s*"(\w+)""#)
        let whole = NSRange(manifest.startIndex..., in: manifest)
        func text(_ match: NSTextCheckingResult, _ group: Int) -> String? {
            Range(match.range(at: group), in: manifest).map { String(manifest[$0]) }
        }
        let targets = call.matches(in: manifest, range: whole).map { match -> Target in
            let kind = text(match, 1) ?? ""
            let name = text(match, 2) ?? ""
            let list = text(match, 3) ?? ""
            let dependencies = quoted.matches(in: list, range: NSRange(list.startIndex..., in: list)).compactMap {
                Range($0.range(at: 1), in: list).map { String(list[$0]) }
            }
            let path = text(match, 4) ?? (kind == "testTarget" ? "Tests/\(name)" : "Sources/\(name)")
            return Target(name: name, kind: kind, dependencies: Set(dependencies), path: path)
        }
        let libraries = system.matches(in: manifest, range: whole).compactMap { text($0, 1) }
        return (targets, Set(libraries))
    }

    /// The modules `import`ed by the Swift files under `path` (any access level, `@testable` too).
    static func imports(under path: String) throws -> Set<String> {
        let directory = RepositoryFiles.root.appendingPathComponent(path)
        let statement = try NSRegularExpression(
            pattern: #"^\s*(?:@testable\s+|@_implementationOnly\s+|internal\s+|public\s+|package\s+|private\s+)*import\s+(\w+)"#,
            options: .anchorsMatchLines)
        var modules: Set<String> = []
        let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
        while let url = walker?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            let source = try String(contentsOf: url, encoding: .utf8)
            for match in statement.matches(in: source, range: NSRange(source.startIndex..., in: source)) {
                if let range = Range(match.range(at: 1), in: source) { modules.insert(String(source[range])) }
            }
        }
        return modules
    }

    func testEveryTargetDependsOnExactlyTheModulesItImports() throws {
        let (targets, libraries) = try Self.targets()
        XCTAssertGreaterThan(targets.count, 20, "Package.swift was read")
        let ours = Set(targets.map(\.name)).union(libraries)
        var problems: [String] = []
        for target in targets {
            let imported = try Self.imports(under: target.path).intersection(ours)
            let unused = target.dependencies.subtracting(imported).sorted()
            let undeclared = imported.subtracting(target.dependencies).subtracting([target.name]).sorted()
            if !unused.isEmpty { problems.append("\(target.name) declares but never imports \(unused.joined(separator: ", "))") }
            if !undeclared.isEmpty { problems.append("\(target.name) imports but does not declare \(undeclared.joined(separator: ", "))") }
        }
        XCTAssertEqual(problems, [], problems.joined(separator: "\n"))
    }

    /// The numbered layer list of Package.swift's comment: target name → layer number.
    static func layers() throws -> (layers: [String: Int], lines: [String]) {
        let manifest = try String(contentsOf: RepositoryFiles.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        var layers: [String: Int] = [:]
        var lines: [String] = []
        for line in manifest.split(separator: "\n") {
            let text = line.dropFirst(2)  // "//"
            guard line.hasPrefix("//   "), let dot = text.firstIndex(of: "."),
                  let number = Int(text[..<dot].trimmingCharacters(in: .whitespaces)),
                  let colon = text.firstIndex(of: ":") else { continue }
            lines.append(text.trimmingCharacters(in: .whitespaces))
            for name in text[text.index(after: colon)...].split(separator: ",") {
                layers[name.trimmingCharacters(in: .whitespaces)] = number
            }
        }
        return (layers, lines)
    }

    func testTheLayerListIsTrueAndTheREADMERepeatsIt() throws {
        let (layers, lines) = try Self.layers()
        let (targets, libraries) = try Self.targets()
        var problems: [String] = []
        for library in libraries where layers[library] == nil { problems.append("\(library) is in no layer") }
        for target in targets where target.kind != "testTarget" && !target.path.hasPrefix("Tests/") {
            guard let layer = layers[target.name] else {
                problems.append("\(target.name) is in no layer")
                continue
            }
            for dependency in target.dependencies.sorted() where (layers[dependency] ?? 0) >= layer {
                problems.append("\(target.name) (layer \(layer)) depends on \(dependency) (layer \(layers[dependency] ?? 0))")
            }
        }
        XCTAssertEqual(problems, [], problems.joined(separator: "\n"))
        XCTAssertGreaterThanOrEqual(lines.count, 8)
        let readme = try String(contentsOf: RepositoryFiles.root.appendingPathComponent("README.md"), encoding: .utf8)
        XCTAssertEqual(try Self.readmeLayers(readme), lines, "README.md's Layout repeats Package.swift's layer list, line for line")
    }

    /// The numbered lines of the first code block of README.md's "## Layout" section.
    static func readmeLayers(_ readme: String) throws -> [String] {
        let section = try XCTUnwrap(readme.range(of: "\n## Layout\n"), "README.md has a Layout section")
        let rest = readme[section.upperBound...]
        let open = try XCTUnwrap(rest.range(of: "```\n"), "the Layout section has a code block")
        let close = try XCTUnwrap(rest[open.upperBound...].range(of: "```"), "the code block ends")
        return rest[open.upperBound..<close.lowerBound].split(separator: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.first?.isNumber == true }
    }

    func testTheREADMELayerReaderReadsTheBlock() throws {
        let readme = "x\n## Layout\n\ntext\n```\n  1. a:  A, B\n  2. b:  C\n```\n## Next\n```\n  3. c: D\n```\n"
        XCTAssertEqual(try Self.readmeLayers(readme), ["1. a:  A, B", "2. b:  C"])
    }
}
