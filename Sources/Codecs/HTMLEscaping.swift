extension String {
    /// The text with `& < > " '` escaped, safe inside HTML element content
    /// and single- or double-quoted attribute values. The one escaping used
    /// by every page Intact writes or serves: the mock server's sign-in form,
    /// canned fault pages, the verification report.
    public var htmlEscaped: String {
        guard contains(where: { "&<>\"'".contains($0) }) else { return self }
        var escaped = ""
        escaped.reserveCapacity(utf8.count + 16)
        for character in self {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
