import HTTP

/// How `header-case` rewrites a field name.
public enum HeaderCaseStyle: String, Sendable, Hashable, CaseIterable {
    /// `content-type`
    case lower
    /// `CONTENT-TYPE`
    case upper
    /// `Content-Type`: each letter after a start or a `-` upper case, the others lower.
    case title

    func apply(_ name: String) -> String {
        switch self {
        case .lower: return HTTPField.lowercaseASCII(name)
        case .upper: return HTTPCaseMapping.upper(name)
        case .title:
            var atStart = true
            var out = ""
            for c in name {
                out += atStart ? HTTPCaseMapping.upper(String(c)) : HTTPField.lowercaseASCII(String(c))
                atStart = c == "-"
            }
            return out
        }
    }
}

/// ASCII-only upper-casing, the counterpart of `HTTPField.lowercaseASCII` (other bytes stay as they are).
enum HTTPCaseMapping {
    static func upper(_ s: String) -> String {
        String(decoding: s.utf8.map { $0 >= 0x61 && $0 <= 0x7A ? $0 & ~0x20 : $0 }, as: UTF8.self)
    }
}
