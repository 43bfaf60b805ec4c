/// A line and column in a configuration file, both from 1; columns count characters.
public struct SourcePosition: Sendable, Hashable, CustomStringConvertible {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public var description: String { "line \(line), column \(column)" }
}

/// A JSON value with the position where it starts, as configuration
/// readers need for their errors. Object members keep their order and their
/// keys' positions.
public struct LocatedJSON: Sendable {
    public indirect enum Value: Sendable {
        case object([Member])
        case array([LocatedJSON])
        case string(String)
        case number(Double)
        case bool(Bool)
        case null
    }

    public struct Member: Sendable {
        public let key: String
        public let keyPosition: SourcePosition
        public let value: LocatedJSON
    }

    public let value: Value
    public let position: SourcePosition

    /// Parses a whole document; a syntax error is a `ConfigurationError` of kind `.syntax`.
    public static func parse(_ bytes: [UInt8]) throws(ConfigurationError) -> LocatedJSON {
        do throws(LocatedJSONParser.SyntaxError) {
            return try LocatedJSONParser.parse(bytes)
        } catch {
            throw ConfigurationError(kind: .syntax(error.message), position: error.position, path: "")
        }
    }

    /// "an object", "a string", … for type errors.
    public var typeName: String {
        switch value {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "a boolean"
        case .null: return "null"
        }
    }
}
