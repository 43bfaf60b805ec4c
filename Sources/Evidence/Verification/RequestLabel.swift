/// A request's method and target as the reports print them: never empty.
/// A CONNECT names its authority (its target is authority-form, so it has no
/// path); a request a tap refused before it parsed (an HTTP/1.1 431 or 400)
/// has no request recorded at all, only the tap's answer, and says so.
enum RequestLabel {
    static func method(_ method: String) -> String {
        method.isEmpty ? "?" : method
    }

    static func target(_ target: String) -> String {
        target.isEmpty ? "(no request recorded)" : target
    }

    /// A recorded request's target: its path, else (a CONNECT) its authority; empty without either.
    static func recordedTarget(_ request: RecordedMessage?) -> String {
        guard let request else { return "" }
        if let path = request.path, !path.isEmpty { return path }
        return request.authority ?? ""
    }

    /// `GET /suite/rest/a`, `CONNECT 127.0.0.1:8443`, `? (no request recorded)`.
    static func line(_ method: String, _ target: String) -> String {
        "\(self.method(method)) \(self.target(target))"
    }
}
