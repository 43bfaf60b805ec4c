/// A line and column in a rule file, both from 1; columns count characters.
public struct SourcePosition: Sendable, Hashable, CustomStringConvertible {
    public var line: Int
    public var column: Int

    public var description: String { "line \(line), column \(column)" }
}

/// A JSON value with the position where it starts, as the rule-file reader
/// needs for its errors. Object members keep their order and their keys'
/// positions. `package`: the fuzz target drives the parser directly.
package struct LocatedJSON {
    indirect enum Value {
        case object([Member])
        case array([LocatedJSON])
        case string(String)
        case number(Double)
        case bool(Bool)
        case null
    }

    struct Member {
        let key: String
        let keyPosition: SourcePosition
        let value: LocatedJSON
    }

    let value: Value
    let position: SourcePosition

    /// "an object", "a string", … for type errors.
    var typeName: String {
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
