/// A response status code (RFC 9110 §15): three digits, 100…999 on the
/// wire (a parser accepts no other, the HTTP/1.1 serializer writes no
/// other), with the classes RFC 9110 §15 names.
///
/// Compares and orders as its code; an integer literal is a status, so
/// `head.status == 404` reads as it always did. Encodes as its code
/// (`Codable` through `RawRepresentable`).
public struct HTTPStatus: RawRepresentable, Hashable, Comparable, Sendable, Codable, CustomStringConvertible,
                          ExpressibleByIntegerLiteral {
    /// The code.
    public let code: Int

    public init(_ code: Int) { self.code = code }

    public init(rawValue: Int) { code = rawValue }

    public init(integerLiteral value: Int) { code = value }

    /// The code (`RawRepresentable`'s name for it).
    public var rawValue: Int { code }

    public static func < (a: HTTPStatus, b: HTTPStatus) -> Bool { a.code < b.code }

    /// The code's digits.
    public var description: String { String(code) }

    /// 1xx: an interim response (101 included: it ends the exchange's HTTP).
    public var isInformational: Bool { code >= 100 && code < 200 }
    /// 2xx.
    public var isSuccessful: Bool { code >= 200 && code < 300 }
    /// 3xx.
    public var isRedirection: Bool { code >= 300 && code < 400 }
    /// 4xx.
    public var isClientError: Bool { code >= 400 && code < 500 }
    /// 5xx.
    public var isServerError: Bool { code >= 500 && code < 600 }
    /// 1xx other than 101: a final response to the same request follows.
    public var isInterim: Bool { isInformational && code != 101 }
    /// 204, 304 and every 1xx: the response has no body whatever its fields
    /// say (RFC 9112 §6.3; a 2xx to CONNECT and a response to HEAD are the
    /// request's business, not the status's).
    public var forbidsBody: Bool { isInformational || code == 204 || code == 304 }

    public static let `continue`: HTTPStatus = 100
    public static let switchingProtocols: HTTPStatus = 101
    public static let earlyHints: HTTPStatus = 103
    public static let ok: HTTPStatus = 200
    public static let noContent: HTTPStatus = 204
    public static let movedPermanently: HTTPStatus = 301
    public static let found: HTTPStatus = 302
    public static let seeOther: HTTPStatus = 303
    public static let notModified: HTTPStatus = 304
    public static let temporaryRedirect: HTTPStatus = 307
    public static let permanentRedirect: HTTPStatus = 308
    public static let badRequest: HTTPStatus = 400
    public static let unauthorized: HTTPStatus = 401
    public static let forbidden: HTTPStatus = 403
    public static let notFound: HTTPStatus = 404
    public static let methodNotAllowed: HTTPStatus = 405
    public static let requestTimeout: HTTPStatus = 408
    public static let contentTooLarge: HTTPStatus = 413
    public static let uriTooLong: HTTPStatus = 414
    public static let misdirectedRequest: HTTPStatus = 421
    public static let requestHeaderFieldsTooLarge: HTTPStatus = 431
    public static let internalServerError: HTTPStatus = 500
    public static let notImplemented: HTTPStatus = 501
    public static let badGateway: HTTPStatus = 502
    public static let serviceUnavailable: HTTPStatus = 503
    public static let gatewayTimeout: HTTPStatus = 504
    public static let httpVersionNotSupported: HTTPStatus = 505
}
