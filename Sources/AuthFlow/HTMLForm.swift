/// The sign-in form a browser finds in a login page: enough HTML reading
/// for the simulator's built-in browser (it is not a general HTML parser).
///
/// Reads the first `<form>` element: its `method` and `action`, and every
/// `<input>` inside it (name, type, value), attribute values quoted or not,
/// with the five basic character references decoded. Also reads
/// `<meta name=… content=…>` anywhere in the page.
public struct HTMLForm: Hashable, Sendable, Codable {
    /// One `<input>` element.
    public struct Input: Hashable, Sendable, Codable {
        public var name: String
        public var type: String
        public var value: String
    }

    /// Uppercased; `GET` when absent.
    public var method: String
    /// As written; empty when absent.
    public var action: String
    public var inputs: [Input]

    /// The `hidden` inputs, in order: a browser submits them as they are.
    public var hiddenFields: [(name: String, value: String)] {
        inputs.filter { $0.type == "hidden" }.map { ($0.name, $0.value) }
    }

    /// True when the form has an input of this name.
    public func hasInput(named name: String) -> Bool { inputs.contains { $0.name == name } }

    /// The first form in `html`, or nil when there is none.
    public init?(html: String) {
        let tags = HTMLForm.tags(in: html)
        guard let start = tags.firstIndex(where: { $0.name == "form" }) else { return nil }
        method = (tags[start].attributes["method"] ?? "get").uppercased()
        action = tags[start].attributes["action"] ?? ""
        inputs = []
        for tag in tags[(start + 1)...] {
            if tag.name == "/form" { break }
            guard tag.name == "input", let name = tag.attributes["name"] else { continue }
            inputs.append(Input(name: name, type: (tag.attributes["type"] ?? "text").lowercased(),
                                value: tag.attributes["value"] ?? ""))
        }
    }

    /// The `content` of `<meta name="name">`, if the page has one.
    public static func meta(named name: String, in html: String) -> String? {
        tags(in: html).first { $0.name == "meta" && $0.attributes["name"] == name }?.attributes["content"]
    }

    static func unescape(_ text: String) -> String {
        guard text.contains("&") else { return text }
        return text.replacingAll("&lt;", "<").replacingAll("&gt;", ">").replacingAll("&quot;", "\"")
            .replacingAll("&#39;", "'").replacingAll("&#x27;", "'").replacingAll("&amp;", "&")
    }

    struct Tag {
        /// Lowercased; closing tags start with `/`.
        let name: String
        let attributes: [String: String]
    }

    /// Every tag in order (comments and text skipped).
    static func tags(in html: String) -> [Tag] {
        var tags: [Tag] = []
        let chars = Array(html)
        var i = 0
        while i < chars.count {
            guard chars[i] == "<" else { i += 1; continue }
            if chars[i...].starts(with: "<!--") {
                var j = i + 4
                while j < chars.count && !chars[j...].starts(with: "-->") { j += 1 }
                i = j + 3
                continue
            }
            var j = i + 1
            var quote: Character? = nil
            while j < chars.count {
                if let q = quote { if chars[j] == q { quote = nil } }
                else if chars[j] == "\"" || chars[j] == "'" { quote = chars[j] }
                else if chars[j] == ">" { break }
                j += 1
            }
            tags.append(parseTag(chars[(i + 1)..<min(j, chars.count)]))
            i = j + 1
        }
        return tags
    }

    private static func parseTag(_ body: ArraySlice<Character>) -> Tag {
        var i = body.startIndex
        func skipSpace() { while i < body.endIndex && (body[i].isWhitespace || body[i] == "/") { i += 1 } }
        var name = ""
        while i < body.endIndex && !body[i].isWhitespace && body[i] != ">" { name.append(body[i]); i += 1 }
        if name.hasSuffix("/") && name.count > 1 { name.removeLast() }
        var attributes: [String: String] = [:]
        while true {
            skipSpace()
            guard i < body.endIndex else { break }
            var key = ""
            while i < body.endIndex && !body[i].isWhitespace && body[i] != "=" && body[i] != "/" { key.append(body[i]); i += 1 }
            var value = ""
            while i < body.endIndex && body[i].isWhitespace { i += 1 }
            if i < body.endIndex && body[i] == "=" {
                i += 1
                while i < body.endIndex && body[i].isWhitespace { i += 1 }
                if i < body.endIndex && (body[i] == "\"" || body[i] == "'") {
                    let q = body[i]
                    i += 1
                    while i < body.endIndex && body[i] != q { value.append(body[i]); i += 1 }
                    i += 1
                } else {
                    while i < body.endIndex && !body[i].isWhitespace { value.append(body[i]); i += 1 }
                }
            }
            let lowered = key.lowercased()
            if !lowered.isEmpty && attributes[lowered] == nil { attributes[lowered] = unescape(value) }
        }
        return Tag(name: name.lowercased(), attributes: attributes)
    }
}

extension String {
    func replacingAll(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
