import ConfigurationFile

/// A message from the browser: the answer to a command (by its id) or an
/// event. Parsed with the project's JSON parser (`LocatedJSON`), which keeps
/// object members in order, so header lists keep the order Chromium gave.
public enum CDPMessage: Sendable {
    /// The answer to command `id`: its result object, or the error the browser gave.
    case response(id: Int, sessionID: String?, result: Result<LocatedJSON, CDPCommandError>)
    /// An event (`Network.requestWillBeSent`…) with its params (an object).
    case event(method: String, sessionID: String?, params: LocatedJSON)

    /// Parses one message (the bytes between NULs).
    public static func parse(_ bytes: [UInt8]) throws(CDPProtocolError) -> CDPMessage {
        let json: LocatedJSON
        do {
            json = try LocatedJSON.parse(bytes)
        } catch {
            throw CDPProtocolError("a DevTools message is not JSON: \(error)")
        }
        guard case .object = json.value else {
            throw CDPProtocolError("a DevTools message is \(json.typeName), not an object")
        }
        let session = json["sessionId"]?.string
        if let id = json["id"] {
            guard let number = id.int else { throw CDPProtocolError("a DevTools answer's id is \(id.typeName), not an integer") }
            if let error = json["error"] {
                let code = error["code"]?.int ?? 0
                let message = error["message"]?.string ?? "(no message)"
                return .response(id: number, sessionID: session, result: .failure(CDPCommandError(code: code, message: message)))
            }
            return .response(id: number, sessionID: session, result: .success(json["result"] ?? LocatedJSON.emptyObject))
        }
        guard let method = json["method"]?.string else {
            throw CDPProtocolError("a DevTools message has neither an id nor a method")
        }
        return .event(method: method, sessionID: session, params: json["params"] ?? LocatedJSON.emptyObject)
    }
}

/// The browser refused a command (`{"error":{"code":-32000,"message":"…"}}`).
public struct CDPCommandError: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: Int
    public var message: String

    public var description: String { "\(message) (DevTools error \(code))" }
}

/// The browser sent something that is not a DevTools message.
public struct CDPProtocolError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

extension LocatedJSON {
    /// `{}` at no position, for answers without a result.
    static let emptyObject: LocatedJSON = {
        do {
            return try LocatedJSON.parse(Array("{}".utf8))
        } catch {
            preconditionFailure("{} parses")
        }
    }()

    /// The member `key` of an object (the first, if repeated); nil otherwise.
    public subscript(key: String) -> LocatedJSON? {
        guard case .object(let members) = value else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The value when it is a string.
    public var string: String? {
        if case .string(let text) = value { return text }
        return nil
    }

    /// The value when it is a number without a fraction.
    public var int: Int? {
        guard case .number(let number) = value, number.rounded() == number, abs(number) < 1e15 else { return nil }
        return Int(number)
    }

    /// The value when it is a number.
    public var double: Double? {
        if case .number(let number) = value { return number }
        return nil
    }

    /// The value when it is a boolean.
    public var bool: Bool? {
        if case .bool(let flag) = value { return flag }
        return nil
    }

    /// The elements when it is an array, else empty.
    public var elements: [LocatedJSON] {
        if case .array(let items) = value { return items }
        return []
    }

    /// An object's members as name/value pairs of strings, in order (a
    /// DevTools `Headers` object); non-string values are skipped.
    public var stringPairs: [(name: String, value: String)] {
        guard case .object(let members) = value else { return [] }
        return members.compactMap { member in member.value.string.map { (member.key, $0) } }
    }
}
