extension HTTPField {
    /// A field name compared as RFC 9110 §5.1 says: ignoring ASCII case.
    ///
    /// Keeps the spelling it was made with (`rawName`, what a field appended
    /// under it is called on the wire); `==` and `hash(into:)` see the name
    /// with ASCII letters lowercased, read byte by byte from the spelling:
    /// comparing builds no `String`, lowercases nothing into memory and
    /// allocates nothing (Docs/performance.md#field-names). The names a
    /// proxy looks up on every head are constants (`.contentLength`, …),
    /// spelled in lowercase, the form HTTP/2 and the semantic digest use.
    ///
    /// The name of a field as it appeared stays the field's `name` (a
    /// `String`, case kept); this is the type a lookup takes.
    public struct Name: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// The name as spelled.
        public let rawName: String

        public init(_ rawName: String) { self.rawName = rawName }

        public init(stringLiteral value: String) { rawName = value }

        public var description: String { rawName }

        /// The name with ASCII letters lowercased (HTTP/2's form, RFC 9113
        /// §8.2.1); the spelling itself when it has no capital.
        public var lowercased: String { HTTPField.lowercaseASCII(rawName) }

        /// True when `text` is this name in any ASCII case. Builds no `String`.
        @inline(__always)
        public func matches(_ text: String) -> Bool {
            HTTPField.utf8EqualIgnoringASCIICase(text, rawName, secondIsLowercase: false)
        }

        public static func == (a: Name, b: Name) -> Bool { a.matches(b.rawName) }

        public func hash(into hasher: inout Hasher) {
            FieldNameIndex.withUTF8(rawName) { utf8 in
                hasher.combine(utf8.count)
                for byte in utf8 { hasher.combine(byte &- 0x41 < 26 ? byte | 0x20 : byte) }
            }
        }

        // The names the codecs, the proxy and the digests look up.
        public static let host: Name = "host"
        public static let contentLength: Name = "content-length"
        public static let contentType: Name = "content-type"
        public static let contentEncoding: Name = "content-encoding"
        public static let transferEncoding: Name = "transfer-encoding"
        public static let connection: Name = "connection"
        public static let keepAlive: Name = "keep-alive"
        public static let proxyConnection: Name = "proxy-connection"
        public static let te: Name = "te"
        public static let trailer: Name = "trailer"
        public static let upgrade: Name = "upgrade"
        public static let http2Settings: Name = "http2-settings"
        public static let expect: Name = "expect"
        public static let location: Name = "location"
        public static let cookie: Name = "cookie"
        public static let setCookie: Name = "set-cookie"
        public static let authorization: Name = "authorization"
        public static let proxyAuthorization: Name = "proxy-authorization"
        public static let proxyAuthenticate: Name = "proxy-authenticate"
        public static let wwwAuthenticate: Name = "www-authenticate"
        public static let altSvc: Name = "alt-svc"
        public static let via: Name = "via"
        public static let date: Name = "date"
        public static let server: Name = "server"
        public static let userAgent: Name = "user-agent"
        public static let accept: Name = "accept"
        public static let acceptEncoding: Name = "accept-encoding"
        public static let cacheControl: Name = "cache-control"
        public static let forwarded: Name = "forwarded"
        public static let xForwardedFor: Name = "x-forwarded-for"
        public static let xForwardedHost: Name = "x-forwarded-host"
        public static let xForwardedProto: Name = "x-forwarded-proto"
        public static let origin: Name = "origin"
        public static let secWebSocketKey: Name = "sec-websocket-key"
        public static let secWebSocketAccept: Name = "sec-websocket-accept"
        public static let secWebSocketVersion: Name = "sec-websocket-version"
        public static let secWebSocketProtocol: Name = "sec-websocket-protocol"
        public static let secWebSocketExtensions: Name = "sec-websocket-extensions"
    }

    /// True when this field's name is `name` (ASCII case ignored). Builds no `String`.
    @inline(__always)
    public func hasName(_ name: Name) -> Bool { name.matches(self.name) }
}
