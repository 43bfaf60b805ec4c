import Foundation
import HTTP

/// One `Set-Cookie` field, parsed (RFC 6265 §5.2) or built to be serialized.
///
/// Parsing is lenient where RFC 6265 is (unknown attributes are kept in
/// `otherAttributes`, a bad `Max-Age` or `Expires` is ignored) and strict where
/// it must be: a field without `=` in its first pair, or with an empty name, is
/// not a cookie (`init?(parsing:)` returns nil). Attribute names compare
/// case-insensitively; the last occurrence of an attribute wins.
public struct SetCookie: Hashable, Sendable, Codable {
    public var name: String
    public var value: String
    public var path: String?
    /// As written, minus a leading dot, lowercased.
    public var domain: String?
    public var maxAge: Int?
    public var expires: Date?
    public var secure: Bool
    public var httpOnly: Bool
    /// `Strict`, `Lax`, `None` as written; nil when absent.
    public var sameSite: String?
    /// Attributes this parser does not interpret, as written (`Partitioned`, `Priority=High`).
    public var otherAttributes: [String]

    public init(name: String, value: String, path: String? = nil, domain: String? = nil,
                maxAge: Int? = nil, expires: Date? = nil, secure: Bool = false, httpOnly: Bool = false,
                sameSite: String? = nil, otherAttributes: [String] = []) {
        self.name = name
        self.value = value
        self.path = path
        self.domain = domain
        self.maxAge = maxAge
        self.expires = expires
        self.secure = secure
        self.httpOnly = httpOnly
        self.sameSite = sameSite
        self.otherAttributes = otherAttributes
    }

    /// Parses a `Set-Cookie` field value; nil when it holds no cookie.
    public init?(parsing field: String) {
        var parts = field.split(separator: ";", omittingEmptySubsequences: false).makeIterator()
        guard let pair = parts.next(), let eq = pair.firstIndex(of: "=") else { return nil }
        let name = SetCookie.trim(pair[..<eq])
        guard !name.isEmpty else { return nil }
        self.init(name: name, value: SetCookie.trim(pair[pair.index(after: eq)...]))
        while let attribute = parts.next() {
            let key: String
            let attributeValue: String
            if let eq = attribute.firstIndex(of: "=") {
                key = SetCookie.trim(attribute[..<eq])
                attributeValue = SetCookie.trim(attribute[attribute.index(after: eq)...])
            } else {
                key = SetCookie.trim(attribute)
                attributeValue = ""
            }
            switch HTTPField.lowercaseASCII(key) {
            case "":
                continue
            case "path":
                path = attributeValue.hasPrefix("/") ? attributeValue : nil
            case "domain":
                let d = attributeValue.hasPrefix(".") ? String(attributeValue.dropFirst()) : attributeValue
                domain = d.isEmpty ? nil : HTTPField.lowercaseASCII(d)
            case "max-age":
                if let n = SetCookie.parseMaxAge(attributeValue) { maxAge = n }
            case "expires":
                if let date = CookieDate.parse(attributeValue) { expires = date }
            case "secure":
                secure = true
            case "httponly":
                httpOnly = true
            case "samesite":
                sameSite = attributeValue
            default:
                otherAttributes.append(SetCookie.trim(attribute))
            }
        }
    }

    /// The field value: `name=value` then attributes in a fixed order
    /// (Path, Domain, Max-Age, Expires, Secure, HttpOnly, SameSite, others).
    public var serialized: String {
        var out = "\(name)=\(value)"
        if let path { out += "; Path=\(path)" }
        if let domain { out += "; Domain=\(domain)" }
        if let maxAge { out += "; Max-Age=\(maxAge)" }
        if let expires { out += "; Expires=\(CookieDate.format(expires))" }
        if secure { out += "; Secure" }
        if httpOnly { out += "; HttpOnly" }
        if let sameSite { out += "; SameSite=\(sameSite)" }
        for other in otherAttributes { out += "; \(other)" }
        return out
    }

    /// When the cookie stops being valid, received at `now`: Max-Age wins over
    /// Expires (RFC 6265 §5.3 step 3); nil for a session cookie.
    public func expiry(receivedAt now: Date) -> Date? {
        if let maxAge { return maxAge <= 0 ? Date.distantPast : now.addingTimeInterval(TimeInterval(maxAge)) }
        return expires
    }

    /// RFC 6265 §5.2.2: an optional `-` then digits; anything else is ignored.
    private static func parseMaxAge(_ text: String) -> Int? {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigitCharacter) else { return nil }
        return Int(text) ?? (text.hasPrefix("-") ? Int.min : Int.max)
    }

    static func trim(_ s: Substring) -> String {
        String(s.drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}

/// Cookie dates: the RFC 6265 §5.1.1 parsing algorithm (accepts IMF-fixdate,
/// RFC 850 and asctime forms and the usual `21-Oct-2015` variants) and
/// IMF-fixdate formatting, with no locale or calendar dependency.
enum CookieDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]

    static func parse(_ text: String) -> Date? {
        // Delimiters: %x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E.
        func isDelimiter(_ b: UInt8) -> Bool {
            b == 0x09 || (0x20...0x2F).contains(b) || (0x3B...0x40).contains(b)
                || (0x5B...0x60).contains(b) || (0x7B...0x7E).contains(b)
        }
        let tokens = text.utf8.split(whereSeparator: isDelimiter).map { String(decoding: $0, as: UTF8.self) }
        var time: (Int, Int, Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        for token in tokens {
            if time == nil, let t = parseTime(token) { time = t; continue }
            if day == nil, let d = leadingNumber(token, digits: 1...2) { day = d; continue }
            if month == nil, token.count >= 3, let m = months.firstIndex(of: HTTPField.lowercaseASCII(String(token.prefix(3)))) {
                month = m + 1; continue
            }
            if year == nil, let y = leadingNumber(token, digits: 2...4) { year = y; continue }
        }
        guard let (h, mi, s) = time, let day, let month, var year else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard (1...31).contains(day), year >= 1601, h <= 23, mi <= 59, s <= 59 else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + h * 3600 + mi * 60 + s))
    }

    static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (y, m, d) = civilFromDays(days)
        let weekday = weekdays[((days % 7) + 7) % 7]
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let month = months[m - 1].prefix(1).uppercased() + months[m - 1].dropFirst()
        return "\(weekday), \(two(d)) \(month) \(y) \(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }

    private static func parseTime(_ token: String) -> (Int, Int, Int)? {
        let parts = token.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3,
              parts.allSatisfy({ (1...2).contains($0.count) && $0.allSatisfy(\.isASCIIDigitCharacter) }),
              let h = Int(parts[0]), let m = Int(parts[1]), let s = Int(parts[2]) else { return nil }
        return (h, m, s)
    }

    /// A token starting with `digits` ASCII digits (and no more), e.g. `06` or `1994`.
    private static func leadingNumber(_ token: String, digits: ClosedRange<Int>) -> Int? {
        let lead = token.prefix(while: \.isASCIIDigitCharacter)
        guard digits.contains(lead.count) else { return nil }
        return Int(lead)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
