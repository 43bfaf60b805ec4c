/// The one table of the fields that concern a single connection (RFC 9110
/// §7.6.1, RFC 9113 §8.2.2), lowercased. Every part of Intact that treats
/// them apart reads it: the semantic head digest leaves them out
/// (`HeadDigest`), HTTP/2 never sends them (`HTTP2FieldMapping`, which also
/// drops `host` and keeps `te: trailers`), a proxy does not forward them
/// (`Proxy`'s `HopByHop`, which keeps the framing ones for the next codec).
/// A `Connection` field can name more; those are per message, not here.
public enum HopByHopFieldNames {
    /// The names that are hop-by-hop in every message.
    public static let fixed: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade", "http2-settings",
    ]

    /// The fields about framing: the semantic form leaves them to the body
    /// digest, and a proxy keeps them for the next hop's codec.
    public static let framing: Set<String> = ["content-length", "transfer-encoding"]
}
