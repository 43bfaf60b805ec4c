import ConfigurationFile
import Foundation
import HTTP

/// How the app's token POST (step 9) carries the token and the PKCE verifier.
///
/// *Synthetic*: the public record says only that "The body of the request
/// contains the token returned by the web browser." Intact's default is a
/// form-encoded body `token=…&codeVerifier=…`; the field names and a JSON
/// alternative are configurable, and the mock server and the client simulator
/// share this one definition.
public struct TokenPostFormat: Hashable, Sendable, Codable {
    /// The body encodings Intact can speak.
    public enum BodyEncoding: String, Hashable, Sendable, Codable {
        /// `application/x-www-form-urlencoded` (the default).
        case form
        /// `application/json`, an object with two string members.
        case json
    }

    public var tokenField: String
    public var verifierField: String
    public var encoding: BodyEncoding

    public init(tokenField: String = "token", verifierField: String = "codeVerifier", encoding: BodyEncoding = .form) {
        self.tokenField = tokenField
        self.verifierField = verifierField
        self.encoding = encoding
    }

    /// The media type the body is sent with and must arrive with.
    public var mediaType: String {
        switch encoding {
        case .form: return FormEncoding.mediaType
        case .json: return "application/json"
        }
    }

    /// The body the app sends.
    public func encode(token: String, verifier: String) -> [UInt8] {
        switch encoding {
        case .form:
            return Array(FormEncoding.encode([(tokenField, token), (verifierField, verifier)]).utf8)
        case .json:
            return JSONBody.encode([tokenField: token, verifierField: verifier])
        }
    }

    /// Why a token POST body could not be read (the server answers 400 with `description`).
    public enum DecodeError: Error, Hashable, Sendable, CustomStringConvertible {
        case wrongContentType(expected: String, got: String?)
        case malformedBody(String)
        case missingField(String)

        public var description: String {
            switch self {
            case .wrongContentType(let expected, let got):
                return "expected Content-Type \(expected), got \(got ?? "none")"
            case .malformedBody(let reason): return "malformed token POST body: \(reason)"
            case .missingField(let name): return "token POST body has no \"\(name)\" field"
            }
        }
    }

    /// Reads token and verifier from a request's `Content-Type` and body.
    public func decode(contentType: String?, body: [UInt8]) throws(DecodeError) -> (token: String, verifier: String) {
        guard let contentType, MediaType.essence(of: contentType) == mediaType else {
            throw .wrongContentType(expected: mediaType, got: contentType)
        }
        var values: [String: String] = [:]
        switch encoding {
        case .form:
            guard let text = String(validating: body, as: UTF8.self), let pairs = FormEncoding.decode(text) else {
                throw .malformedBody("not valid form encoding")
            }
            for pair in pairs where values[pair.name] == nil { values[pair.name] = pair.value }
        case .json:
            guard let object = JSONBody.decodeObject(body) else { throw .malformedBody("not a JSON object") }
            for (key, value) in object { if let text = value as? String { values[key] = text } }
        }
        guard let token = values[tokenField], !token.isEmpty else { throw .missingField(tokenField) }
        guard let verifier = values[verifierField], !verifier.isEmpty else { throw .missingField(verifierField) }
        return (token, verifier)
    }
}

/// Media-type helpers for `Content-Type` values.
enum MediaType {
    /// `type/subtype` lowercased, parameters dropped (`application/json; charset=utf-8` → `application/json`).
    static func essence(of value: String) -> String {
        let head = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return HTTPField.lowercaseASCII(SetCookie.trim(head))
    }
}

/// JSON bodies as the mock server writes them and the client reads them:
/// keys sorted, slashes not escaped (so URLs read as in the document).
enum JSONBody {
    static func encode(_ object: [String: Any]) -> [UInt8] {
        // Only strings, booleans, numbers and nested dictionaries are passed in, so this cannot throw.
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return Array(data)
    }

    /// The body as a JSON object, read by the one JSON reader of Intact's
    /// configuration files (`LocatedJSON`): strings as `String`, numbers as
    /// `Double`, booleans as `Bool`, null as `NSNull`, nested objects and
    /// arrays alike. Nil for an empty body, a syntax error, a key given twice
    /// in one object (ambiguous: RFC 8259 §4 leaves its meaning open), or a
    /// document that is not an object.
    static func decodeObject(_ body: [UInt8]) -> [String: Any]? {
        guard !body.isEmpty, let document = try? LocatedJSON.parse(body),
              case .object = document.value else { return nil }
        return plain(document) as? [String: Any]
    }

    /// A located value without its positions.
    private static func plain(_ json: LocatedJSON) -> Any {
        switch json.value {
        case .object(let members):
            var object: [String: Any] = [:]
            for member in members { object[member.key] = plain(member.value) } // keys are unique (the parser's rule)
            return object
        case .array(let items): return items.map(plain)
        case .string(let text): return text
        case .number(let number): return number
        case .bool(let flag): return flag
        case .null: return NSNull()
        }
    }
}
