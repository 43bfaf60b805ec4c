import Codecs

/// A JSON value Intact sends in a DevTools command's `params`. Written with
/// the project's `JSONWriter`; object members keep their order.
public indirect enum CDPValue: Hashable, Sendable {
    case string(String)
    case int(Int)
    case bool(Bool)
    case array([CDPValue])
    case object([Member])

    /// One member of an object.
    public struct Member: Hashable, Sendable {
        public var key: String
        public var value: CDPValue

        public init(_ key: String, _ value: CDPValue) {
            self.key = key
            self.value = value
        }
    }

    /// `.object` from pairs, in order.
    public static func object(_ pairs: KeyValuePairs<String, CDPValue>) -> CDPValue {
        .object(pairs.map { Member($0.key, $0.value) })
    }

    /// The empty object, `{}`.
    public static let empty = CDPValue.object([Member]())

    /// The value as JSON text.
    public var encoded: [UInt8] {
        var writer = JSONWriter(capacity: 256)
        write(to: &writer)
        return writer.bytes
    }

    func write(to writer: inout JSONWriter) {
        switch self {
        case .string(let value): writer.string(value)
        case .int(let value): writer.int(value)
        case .bool(let value): writer.bool(value)
        case .array(let values):
            writer.openArray()
            for value in values { value.write(to: &writer) }
            writer.closeArray()
        case .object(let members):
            writer.openObject()
            for member in members {
                writer.key(escaping: member.key)
                member.value.write(to: &writer)
            }
            writer.closeObject()
        }
    }
}

/// A command to the browser: `{"id":N,"method":"Domain.name","params":{…},"sessionId":"…"}`.
public struct CDPCommand: Hashable, Sendable {
    public var id: Int
    public var method: String
    public var params: CDPValue
    /// The attached target's session (flat mode), nil for the browser itself.
    public var sessionID: String?

    public init(id: Int, method: String, params: CDPValue = .empty, sessionID: String? = nil) {
        self.id = id
        self.method = method
        self.params = params
        self.sessionID = sessionID
    }

    /// The JSON text, without the pipe's NUL (`CDPFramer.frame` adds it).
    public var encoded: [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.openObject()
        writer.member("id", id)
        writer.member("method", method)
        writer.key("params")
        params.write(to: &writer)
        writer.member("sessionId", ifPresent: sessionID)
        writer.closeObject()
        return writer.bytes
    }
}
