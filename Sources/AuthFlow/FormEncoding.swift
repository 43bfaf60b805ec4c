/// `application/x-www-form-urlencoded` (WHATWG URL §5) for query strings and
/// form bodies: `name=value` pairs joined by `&`, space as `+`, every byte
/// outside `A-Z a-z 0-9 * - . _` percent-encoded from UTF-8.
public enum FormEncoding {
    /// The media type of form bodies.
    public static let mediaType = "application/x-www-form-urlencoded"

    /// Encodes pairs in order.
    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    /// Decodes pairs in order; a pair without `=` has an empty value. Nil when
    /// a `%` escape is malformed or the decoded bytes are not UTF-8.
    public static func decode(_ text: String) -> [(name: String, value: String)]? {
        var out: [(name: String, value: String)] = []
        for piece in text.split(separator: "&", omittingEmptySubsequences: true) {
            let name: Substring
            let value: Substring
            if let eq = piece.firstIndex(of: "=") {
                name = piece[..<eq]
                value = piece[piece.index(after: eq)...]
            } else {
                name = piece
                value = ""
            }
            guard let n = unescape(name), let v = unescape(value) else { return nil }
            out.append((n, v))
        }
        return out
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    static func escape(_ text: String) -> String {
        var out: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
                out.append(byte)
            case UInt8(ascii: " "):
                out.append(UInt8(ascii: "+"))
            default:
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0f)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func unescape(_ text: Substring) -> String? {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            if byte == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
                i += 1
            } else if byte == UInt8(ascii: "%") {
                guard i + 2 < bytes.count,
                      let hi = hexValue(bytes[i + 1]), let lo = hexValue(bytes[i + 2]) else { return nil }
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(byte)
                i += 1
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
