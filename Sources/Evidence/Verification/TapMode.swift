/// How a tap ran, as its recording header says (`client`, `server`,
/// `forward`, `reverse`, `demo`…): the report names it, the verifier uses it
/// to judge a tap without records and to find a reverse proxy's own scheme
/// choice. A wrapper over the recorded string, so a mode a newer build
/// writes still reads; the modes the verifier relies on are constants.
/// Encoded as the plain string.
public struct TapMode: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral {
    public let rawValue: String

    public static let client: TapMode = "client"
    public static let server: TapMode = "server"
    public static let forward: TapMode = "forward"
    public static let reverse: TapMode = "reverse"

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public init(stringLiteral value: String) {
        self.init(rawValue: value)
    }

    public var description: String { rawValue }
}
