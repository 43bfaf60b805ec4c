/// How the reports spell a field name: one case for a name, whichever
/// message it is named from. HTTP/2 and HAProxy write names in lower case,
/// most HTTP/1.1 stacks capitalised, so `via` on one message and `Via` on the
/// other would read as two fields. A spelling with a capital letter is kept
/// as the message wrote it (`X-APPIAN-CSRF-TOKEN`, `WWW-Authenticate`); an
/// all-lowercase one is capitalised at each hyphen (`x-forwarded-for` →
/// `X-Forwarded-For`).
enum FieldDisplayName {
    static func of(_ spelling: String) -> String {
        guard !spelling.contains(where: \.isUppercase) else { return spelling }
        return spelling.split(separator: "-", omittingEmptySubsequences: false)
            .map { $0.prefix(1).uppercased() + $0.dropFirst() }
            .joined(separator: "-")
    }
}
