import Compression
import Foundation
import HTTP

extension MockServer {
    /// A response being built: head, body and the server's one-line note.
    struct Reply {
        var head: HTTPResponseHead
        var body: [UInt8]
        var note: String

        init(status: Int, contentType: String?, body: [UInt8], note: String) {
            var fields = HTTPFields()
            if let contentType { fields.append("Content-Type", contentType) }
            head = HTTPResponseHead(status: HTTPStatus(status), fields: fields)
            self.body = body
            self.note = note
        }

        /// A 4xx/5xx with the reason as plain text and in `Intact-Reason`.
        static func plain(_ status: Int, _ reason: String) -> Reply {
            var reply = Reply(status: status, contentType: "text/plain; charset=utf-8",
                              body: Array((reason + "\n").utf8), note: "rejected: \(reason)")
            reply.head.fields.append(MockServer.reasonFieldName, reason)
            return reply
        }

        static func methodNotAllowed(_ method: HTTPMethod, allowed: HTTPMethod) -> Reply {
            var reply = plain(405, "method \(method) not allowed here; use \(allowed)")
            reply.head.fields.append("Allow", allowed.rawValue)
            return reply
        }

        static func json(_ status: Int, _ object: [String: Any], note: String) -> Reply {
            Reply(status: status, contentType: "application/json", body: JSONBody.encode(object), note: note)
        }

        static func html(_ status: Int, _ page: String, note: String) -> Reply {
            Reply(status: status, contentType: "text/html; charset=utf-8", body: Array(page.utf8), note: note)
        }

        mutating func setCookie(_ cookie: SetCookie) {
            head.fields.append("Set-Cookie", cookie.serialized)
        }

        /// Adds what every response carries: `Date` (RFC 9110 §6.6.1 asks it of an
        /// origin server with a clock) and `Server`, as a real server sends them, so
        /// an intermediary that adds its own (nginx does when they are absent) shows
        /// as a change; then the trace echo, `Cache-Control`, the encoding
        /// when `gzip` (the body gzip-encoded, `Content-Encoding`, `Vary`
        /// and the server's own statement `Intact-Content-Encoding`), `Content-Length`.
        mutating func finish(traceEcho: String?, now: Date, server: String, gzip: Bool) {
            head.fields.append("Date", CookieDate.format(now))
            head.fields.append("Server", server)
            if let traceEcho { head.fields.append(SignInFlow.traceFieldName, traceEcho) }
            head.fields.append("Cache-Control", "no-store")
            if gzip && !body.isEmpty {
                body = Compressor.compress(body, format: .gzip)
                head.fields.append("Content-Encoding", "gzip")
                head.fields.append("Vary", "Accept-Encoding")
                head.fields.append(MockServer.contentEncodingFieldName, "gzip")
            }
            head.fields.append("Content-Length", String(body.count))
        }
    }

    /// The response field carrying the reason of a rejection (*synthetic*).
    public static let reasonFieldName = "Intact-Reason"

    /// The response field in which the server states the content coding it
    /// applied itself (*synthetic*, like the trace echo): a `Content-Encoding`
    /// it does not repeat was added on the way.
    public static let contentEncodingFieldName = "Intact-Content-Encoding"

    /// True when an `Accept-Encoding` value accepts gzip (RFC 9110 §12.5.3:
    /// `gzip`, `x-gzip` or `*`, with a q-value above zero).
    public static func acceptsGzip(_ acceptEncoding: String?) -> Bool {
        guard let acceptEncoding else { return false }
        for member in acceptEncoding.split(separator: ",") {
            let parts = member.split(separator: ";").map { HTTPField.lowercaseASCII($0.trimmingCharacters(in: .whitespaces)) }
            guard let coding = parts.first, ["gzip", "x-gzip", "*"].contains(coding) else { continue }
            let q = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            if q > 0 { return true }
        }
        return false
    }

    /// Step 3: 401 with `{"contextUrl": …, "tokenUrl": …}` from the configured external URL.
    func challenge(reason: String) -> Reply {
        var reply = Reply.json(401, ["contextUrl": configuration.contextURL.serialized,
                                     "tokenUrl": configuration.tokenURL.serialized],
                               note: "challenge: \(reason)")
        reply.head.fields.append(MockServer.reasonFieldName, reason)
        return reply
    }

    /// A cookie scoped to the context path; `Secure` when the external origin is https.
    func contextCookie(_ name: String, _ value: String, httpOnly: Bool, maxAge: Int? = nil) -> SetCookie {
        SetCookie(name: name, value: value, path: configuration.contextRequestPath, maxAge: maxAge,
                  secure: configuration.externalOrigin.scheme == "https", httpOnly: httpOnly)
    }
}
