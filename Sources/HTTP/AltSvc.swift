/// The `Alt-Svc` field (RFC 7838): alternative services a server (or an
/// intermediary in its name) advertises for the origin.
public enum AltSvc {
    /// True when the value names an HTTP/3 alternative (`h3=":443"`,
    /// `h3-29=":443"`): a client that honours it may leave TCP for QUIC.
    public static func advertisesHTTP3(_ value: String) -> Bool {
        value.split(separator: ",").contains { entry in
            let name = entry.drop { $0 == " " || $0 == "\t" }.prefix { $0 != "=" }
            return name == "h3" || name.hasPrefix("h3-")
        }
    }
}
