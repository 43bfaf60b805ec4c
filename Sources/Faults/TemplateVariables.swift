import Foundation
import HTTP

/// The request's own values a rule may write into what it changes:
/// `${authority}` (`host[:port]` as the client sent it) and `${target}` (its
/// path and query), in `regex-body` templates and `set-status` locations.
/// So a rule can write an absolute URL with the run's own name and port, as
/// an intermediary that rewrites URLs does (`http://${authority}${target}`).
/// `\${` is a literal `${`.
struct TemplateVariables: Sendable, Hashable {
    static let names = ["authority", "target"]

    var authority: String
    var target: String

    /// The request's values: `:authority` or `Host` (empty when it has neither), its path and query.
    init(request: HTTPRequestHead) {
        authority = request.authority ?? request.fields["Host"] ?? ""
        target = request.path
    }

    init(authority: String, target: String) {
        self.authority = authority
        self.target = target
    }

    /// `text` with each unescaped `${NAME}` replaced; with `forRegexTemplate`
    /// the values are escaped (`\`, `$`) so the regex engine copies them
    /// literally, and an escaped `\${` is left for it (it writes `${`).
    /// Without, `\${` becomes `${`.
    func expand(_ text: String, forRegexTemplate: Bool) -> String {
        guard text.contains("${") else { return text }
        var out = ""
        var rest = Substring(text)
        while let found = rest.range(of: "${") {
            let before = rest[..<found.lowerBound]
            let escaped = before.reversed().prefix { $0 == "\\" }.count % 2 == 1
            let close = rest[found.upperBound...].firstIndex(of: "}")
            let name = close.map { String(rest[found.upperBound..<$0]) }
            guard !escaped, let close, let name, let value = value(of: name) else {
                out += forRegexTemplate || !escaped ? before : before.dropLast()
                out += "${"
                rest = rest[found.upperBound...]
                continue
            }
            out += before
            out += forRegexTemplate ? value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "$", with: "\\$") : value
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }

    private func value(of name: String) -> String? {
        switch name {
        case "authority": return authority
        case "target": return target
        default: return nil
        }
    }

    /// The first unescaped `${…}` in `text` that names no variable, for rule errors.
    static func unknownVariable(in text: String) -> String? {
        var rest = Substring(text)
        while let found = rest.range(of: "${") {
            let escaped = rest[..<found.lowerBound].reversed().prefix { $0 == "\\" }.count % 2 == 1
            let close = rest[found.upperBound...].firstIndex(of: "}")
            let name = close.map { String(rest[found.upperBound..<$0]) } ?? ""
            if !escaped && (close == nil || !names.contains(name)) {
                return close.map { String(rest[found.lowerBound...$0]) } ?? String(rest[found.lowerBound...])
            }
            rest = rest[found.upperBound...]
        }
        return nil
    }

    /// The rule-file error text for `unknown` in `field`.
    static func unknownMessage(_ unknown: String, in field: String) -> String {
        "\(field) holds \(unknown), which names no variable: ${authority} and ${target} are the variables (\\${ writes a literal ${)"
    }
}

extension FaultAction {
    /// The action with the request's values written into its templates
    /// (`regex-body`'s template, `set-status`'s location); others unchanged.
    func expanded(with variables: TemplateVariables) -> FaultAction {
        switch self {
        case .regexBody(let regex, let template):
            return .regexBody(regex, template: variables.expand(template, forRegexTemplate: true))
        case .setStatus(let status, let reason, let location?):
            return .setStatus(status: status, reason: reason, location: variables.expand(location, forRegexTemplate: false))
        default:
            return self
        }
    }
}
