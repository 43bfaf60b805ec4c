/// A body as text for the text-rewriting actions (regex-body, rewrite-urls):
/// UTF-8 when the bytes are valid UTF-8, otherwise ISO-8859-1, which maps
/// every byte to one character, so no byte is ever lost. The rewritten text
/// is encoded back the same way.
struct BodyText {
    enum Encoding { case utf8, latin1 }

    var text: String
    let encoding: Encoding

    init(_ bytes: [UInt8]) {
        if let utf8 = String(validating: bytes, as: UTF8.self) {
            text = utf8
            encoding = .utf8
        } else {
            text = String(latin1: bytes)
            encoding = .latin1
        }
    }

    var bytes: [UInt8] {
        switch encoding {
        case .utf8: return Array(text.utf8)
        case .latin1: return text.latin1Bytes
        }
    }
}
