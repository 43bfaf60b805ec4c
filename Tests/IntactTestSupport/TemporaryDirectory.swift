import Foundation
import Glibc
import XCTest

/// Fresh private directories for tests: the one helper every test target uses.
public enum TemporaryDirectory {
    /// Creates `/tmp/PREFIX-XXXXXX` (mode 0700, a name no other run has) and
    /// returns its path. The caller removes it; tests use `makeTemporaryDirectory`.
    public static func create(prefix: String = "intact-test") -> String {
        var template = Array("\(NSTemporaryDirectory())/\(prefix)-XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard let created else { preconditionFailure("mkdtemp failed: \(String(cString: strerror(errno)))") }
        return URL(fileURLWithPath: String(cString: created)).standardizedFileURL.path
    }
}

extension XCTestCase {
    /// A fresh private directory, removed when the test ends.
    public func makeTemporaryDirectory(prefix: String = "intact-test") -> String {
        let path = TemporaryDirectory.create(prefix: prefix)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }
}
