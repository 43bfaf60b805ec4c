import Foundation

/// Finds scenario directories: a directory holding `scenario.json` is one
/// scenario; any other directory is searched (recursively) for them.
public enum ScenarioCatalog {
    /// The scenario directories at or under `path`, sorted by path.
    /// Throws `.manifestMissing` when there is none. Blocks on disk I/O.
    public static func directories(at path: String) throws(ScenarioError) -> [String] {
        let root = URL(fileURLWithPath: path).standardizedFileURL.path
        if FileManager.default.fileExists(atPath: root + "/" + Scenario.manifestFileName) { return [root] }
        let found = (FileManager.default.subpaths(atPath: root) ?? [])
            .filter { $0 == Scenario.manifestFileName || $0.hasSuffix("/" + Scenario.manifestFileName) }
            .map { root + "/" + $0.dropLast(Scenario.manifestFileName.count + 1) }
            .sorted()
        guard !found.isEmpty else { throw .manifestMissing(directory: path) }
        return found
    }

    /// Every scenario at or under each of `paths`, loaded, in order, without duplicates.
    public static func load(_ paths: [String]) throws(ScenarioError) -> [Scenario] {
        var seen = Set<String>()
        var scenarios: [Scenario] = []
        for path in paths {
            for directory in try directories(at: path) where seen.insert(directory).inserted {
                scenarios.append(try Scenario.load(from: directory))
            }
        }
        return scenarios
    }
}
