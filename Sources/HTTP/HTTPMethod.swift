/// A request method (RFC 9110 §9): a token, compared case-sensitively as
/// RFC 9110 §9.1 says (`get` is not `GET`).
///
/// The standard methods are constants (`HTTPMethod.get`, `.connect`, …);
/// any other token (an extension method such as `PROPFIND`, or one a test
/// sends to see it refused) is `HTTPMethod("PROPFIND")` or a string literal.
/// A parser makes one from the bytes it checked as a token; code that makes
/// one from other text must keep to a token (the HTTP/1.1 serializer
/// refuses anything else, `HTTP1SerializerError.invalidMethod`).
///
/// Comparing two methods compares their texts: for the standard methods
/// (all under 16 bytes) that is one comparison of two small strings, with
/// no allocation and no retain.
///
/// Encodes as its text (`Codable` through `RawRepresentable`).
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The method as it appears on the wire.
    public let rawValue: String

    public init(_ rawValue: String) { self.rawValue = rawValue }

    public init(rawValue: String) { self.rawValue = rawValue }

    public init(stringLiteral value: String) { rawValue = value }

    public var description: String { rawValue }

    public static let get: HTTPMethod = "GET"
    public static let head: HTTPMethod = "HEAD"
    public static let post: HTTPMethod = "POST"
    public static let put: HTTPMethod = "PUT"
    public static let delete: HTTPMethod = "DELETE"
    public static let connect: HTTPMethod = "CONNECT"
    public static let options: HTTPMethod = "OPTIONS"
    public static let trace: HTTPMethod = "TRACE"
    public static let patch: HTTPMethod = "PATCH"
    /// The method of the HTTP/2 connection preface seen by an HTTP/1.1 parser (RFC 9113 §3.4).
    public static let pri: HTTPMethod = "PRI"
}
