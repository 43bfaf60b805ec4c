import Foundation
import Wire

/// How an option's text becomes its value: the placeholder `--help` shows
/// ("N", "ADDR:PORT") and a conversion that either returns the value or
/// says what it expected. Errors read "option --NAME expects EXPECTED, got 'TEXT'".
struct ValueParser<T: Sendable>: Sendable {
    let valueName: String
    private let convert: @Sendable (String) throws(Rejection) -> T

    /// Why a text was refused: what was expected, in words ("a whole number from 1 to 10").
    struct Rejection: Error {
        let expected: String
    }

    /// A conversion that may refuse with a specific expectation (`throw Rejection(expected:)`).
    init(valueName: String, _ convert: @escaping @Sendable (String) throws(Rejection) -> T) {
        self.valueName = valueName
        self.convert = convert
    }

    /// A conversion that returns nil for anything it does not accept, which
    /// the error then describes as `expected`.
    init(valueName: String, expected: String, _ convert: @escaping @Sendable (String) -> T?) {
        self.init(valueName: valueName) { (text: String) throws(Rejection) -> T in
            guard let value = convert(text) else { throw Rejection(expected: expected) }
            return value
        }
    }

    /// The value of `text`, given for `--option`.
    func parse(option: String, _ text: String) throws(InvalidOptionValue) -> T {
        do {
            return try convert(text)
        } catch {
            throw InvalidOptionValue(option: option, expected: error.expected, got: text)
        }
    }
}

/// A text an option does not accept; the parser reports it as a usage error.
struct InvalidOptionValue: Error, CustomStringConvertible {
    let option: String
    let expected: String
    let got: String

    var description: String { "option --\(option) expects \(expected), got '\(got)'" }
}

extension ValueParser where T == String {
    /// Any text (the parser already refuses an empty value).
    static func string(_ valueName: String) -> ValueParser<String> {
        ValueParser(valueName: valueName, expected: "a value") { $0 }
    }
}

extension ValueParser where T == [String] {
    /// Names separated by commas, as given (`a,b,c`); the parts must be
    /// non-empty after trimming and each accepted by `isValid`.
    static func list(_ valueName: String, expected: String,
                     isValid: @escaping @Sendable (String) -> Bool = { _ in true }) -> ValueParser<[String]> {
        ValueParser(valueName: valueName, expected: expected) { text in
            let parts = text.split(separator: ",", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            return parts.allSatisfy({ !$0.isEmpty && isValid($0) }) ? parts : nil
        }
    }
}

extension ValueParser where T == Int {
    /// A whole number within `range`.
    static func integer(in range: ClosedRange<Int>, _ valueName: String = "N") -> ValueParser<Int> {
        ValueParser(valueName: valueName,
                    expected: "a whole number from \(range.lowerBound) to \(range.upperBound)") { text in
            Int(text).flatMap { range.contains($0) ? $0 : nil }
        }
    }

    /// A positive size in bytes: `65536`, `64K`, `1M`, `2G`.
    static func byteSize(_ valueName: String) -> ValueParser<Int> {
        ValueParser(valueName: valueName, expected: "a size such as 65536, 64K or 1M") { text in
            let multipliers: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
            var digits = text.uppercased()
            var multiplier = 1
            if let last = digits.last, let factor = multipliers[last] {
                multiplier = factor
                digits.removeLast()
            }
            guard let number = Int(digits), number > 0, number <= Int.max / multiplier else { return nil }
            return number * multiplier
        }
    }
}

extension ValueParser where T == UInt64 {
    /// Any unsigned 64-bit number.
    static func unsigned(_ valueName: String = "N") -> ValueParser<UInt64> {
        ValueParser(valueName: valueName, expected: "a whole number from 0 to \(UInt64.max)") { UInt64($0) }
    }
}

extension ValueParser where T == Double {
    /// A positive duration in seconds: `120`, `1.5`, `90s`, `500ms`, `65m`, `2h`.
    static func duration(_ valueName: String = "DURATION") -> ValueParser<Double> {
        ValueParser(valueName: valueName, expected: "a positive duration such as 120, 90s, 500ms or 65m") { text in
            let units: [(suffix: String, scale: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("", 1)]
            guard let unit = units.first(where: { text.hasSuffix($0.suffix) }),
                  let number = Double(text.dropLast(unit.suffix.count)), number.isFinite, number > 0 else { return nil }
            return number * unit.scale
        }
    }
}

extension ValueParser where T == SocketAddress {
    /// An IP literal and a port: `127.0.0.1:8080`, `[::1]:0`. Names are refused.
    static func socketAddress(_ valueName: String = "ADDR:PORT") -> ValueParser<SocketAddress> {
        ValueParser(valueName: valueName,
                    expected: "an IP address and port such as 127.0.0.1:8080 or [::1]:0") { SocketAddress($0) }
    }
}

extension ValueParser {
    /// One of `cases`, spelled as their raw values ("text or json").
    static func choice(_ cases: [T], _ valueName: String) -> ValueParser<T>
    where T: RawRepresentable, T.RawValue == String {
        let names = cases.map(\.rawValue)
        let expected = names.count < 2 ? names.joined()
            : names.dropLast().joined(separator: ", ") + " or " + names[names.count - 1]
        return ValueParser(valueName: valueName, expected: expected) { text in cases.first { $0.rawValue == text } }
    }
}
