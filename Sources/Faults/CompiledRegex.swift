import Foundation

/// A regular expression compiled once, when a rule is read, and shared by
/// every exchange. Two values are equal when their patterns are.
///
/// NSRegularExpression is immutable after creation and safe to use from
/// several threads at once.
public struct CompiledRegex: Sendable, Hashable, CustomStringConvertible {
    /// The pattern as written (ICU syntax, as NSRegularExpression reads it).
    public let pattern: String
    private let regex: NSRegularExpression

    /// Compiles `pattern`; the error says why it does not compile.
    public init(_ pattern: String) throws(InvalidRegex) {
        do {
            regex = try NSRegularExpression(pattern: pattern)
        } catch {
            throw InvalidRegex(pattern: pattern, reason: InvalidRegex.reason(pattern: pattern, error: error))
        }
        self.pattern = pattern
    }

    /// A regex matching `literal` exactly, nowhere else.
    static func literal(_ literal: String) -> String { NSRegularExpression.escapedPattern(for: literal) }

    /// True when the pattern matches anywhere in `text`.
    func matches(_ text: String) -> Bool {
        regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }

    /// Replaces every match with `template` (`$1` names a group, `\$` a dollar);
    /// returns the new text and how many matches were replaced.
    func replacingMatches(in text: String, with template: String) -> (text: String, count: Int) {
        let range = NSRange(text.startIndex..., in: text)
        let count = regex.numberOfMatches(in: text, range: range)
        guard count > 0 else { return (text, 0) }
        return (regex.stringByReplacingMatches(in: text, range: range, withTemplate: template), count)
    }

    /// Every match, as the ranges of the whole match (index 0) and of each group (absent groups are nil).
    func matchRanges(in text: String) -> [[Range<String.Index>?]] {
        regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { match in
            (0..<match.numberOfRanges).map { Range(match.range(at: $0), in: text) }
        }
    }

    public var description: String { pattern }

    public static func == (a: CompiledRegex, b: CompiledRegex) -> Bool { a.pattern == b.pattern }
    public func hash(into hasher: inout Hasher) { hasher.combine(pattern) }
}

/// A pattern that does not compile, and why.
public struct InvalidRegex: Error, Sendable, Hashable, CustomStringConvertible {
    public var pattern: String
    public var reason: String

    public var description: String { "regex \"\(pattern)\" does not compile: \(reason)" }

    /// NSRegularExpression's reason. On Linux it only says "The value is
    /// invalid", so the Swift regex parser's diagnosis, which names the
    /// problem ("expected ')'"), is added when it has one.
    static func reason(pattern: String, error: any Error) -> String {
        let foundation = "NSRegularExpression: \(error.localizedDescription)"
        do {
            _ = try Regex(pattern)
            return foundation
        } catch {
            return "\(foundation) (\(error))"
        }
    }
}
