/// The few field checks the connection layers and engines make on heads they send.
extension HTTPFields {
    /// Whether these fields declare a request body: a `Content-Length` other
    /// than 0, or any `Transfer-Encoding` (the HTTP/1.1 rule for requests).
    public var declareRequestBody: Bool {
        if contains("transfer-encoding") { return true }
        guard let length = self["content-length"] else { return false }
        return Self.trimmed(Substring(length)) != "0"
    }

    /// Whether `Connection` lists `close`.
    public var requestsClose: Bool {
        values(.connection).contains { value in
            value.split(separator: ",").contains { HTTPField.lowercaseASCII(Self.trimmed($0)) == "close" }
        }
    }

    /// The text without surrounding spaces and tabs.
    private static func trimmed(_ text: Substring) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
