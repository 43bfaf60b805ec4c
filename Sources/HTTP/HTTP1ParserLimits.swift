/// Size limits an `HTTP1Parser` enforces before it buffers more of a head.
/// Each limit is checked while bytes arrive, so an oversize line is refused
/// as soon as it passes the limit, not when its end finally comes.
public struct HTTP1ParserLimits: Hashable, Sendable {
    /// Longest request or status line, CRLF excluded (exceeded: 414).
    public var maxStartLineLength: Int
    /// Largest field section after the start line, CRLFs and the blank line
    /// included (exceeded: 431). Trailer sections get the same limit.
    public var maxHeaderSectionLength: Int
    /// Most field lines in one head or trailer section (exceeded: 431).
    public var maxFieldCount: Int
    /// Longest chunk-size line, extensions included, CRLF excluded (exceeded: 400).
    public var maxChunkLineLength: Int

    public init(maxStartLineLength: Int = 8 * 1024, maxHeaderSectionLength: Int = 64 * 1024,
                maxFieldCount: Int = 200, maxChunkLineLength: Int = 4 * 1024) {
        self.maxStartLineLength = maxStartLineLength
        self.maxHeaderSectionLength = maxHeaderSectionLength
        self.maxFieldCount = maxFieldCount
        self.maxChunkLineLength = maxChunkLineLength
    }

    /// The defaults: 8 KiB start line, 64 KiB header section, 200 fields, 4 KiB chunk line.
    public static let standard = HTTP1ParserLimits()
}
