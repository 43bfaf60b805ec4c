import Codecs
import HTTP
import TLS

/// The CA page (mitmproxy's `mitm.it`): what a device set to use the proxy
/// opens at `http://intact.proxy/` to install the development CA. One
/// self-contained HTML page (no external assets, no script) with the CA's
/// fingerprints, a download link per export format, and short install steps
/// for Android, iOS, macOS, Windows, Linux and Firefox; plus the downloads.
///
/// Every body is made once, in `init` (off the loops); `response(to:)` only
/// picks one, so it never blocks. No download holds a key.
public struct CAPage: LocalSite {
    /// One download: its path on the page, media type, bytes.
    struct Download: Sendable {
        var format: CAExportFormat
        var path: String
        var bytes: [UInt8]
    }

    let page: [UInt8]
    let downloads: [Download]

    /// Renders the page and every export of `authority`.
    public init(authority: CertificateAuthority) throws {
        downloads = try CAExportFormat.allCases.map { format in
            Download(format: format, path: "/" + authority.exportFileName(format), bytes: try authority.export(format))
        }
        page = Array(CAPage.render(authority, downloads: downloads).utf8)
    }

    public func response(to head: HTTPRequestHead) -> [HTTPResponsePart] {
        guard head.method == .get || head.method == .head else {
            return answer(405, "text/plain; charset=utf-8", Array("intact.proxy serves GET and HEAD only\n".utf8),
                          head: head, extra: [("Allow", "GET, HEAD")])
        }
        let path = head.pathOnly
        if let download = downloads.first(where: { $0.path == path }) {
            let name = String(download.path.dropFirst())
            return answer(200, download.format.mediaType, download.bytes, head: head,
                          extra: [("Content-Disposition", "attachment; filename=\"\(name)\"")])
        }
        return answer(path == "/" ? 200 : 404, "text/html; charset=utf-8", page, head: head, extra: [])
    }

    private func answer(_ status: Int, _ type: String, _ body: [UInt8], head: HTTPRequestHead,
                        extra: [(String, String)]) -> [HTTPResponsePart] {
        var fields = HTTPFields()
        fields.append("Content-Type", type)
        fields.append("Content-Length", String(body.count))
        fields.append("Cache-Control", "no-store")
        for (name, value) in extra { fields.append(name, value) }
        fields.append("Proxy-Status", "\(LocalResponse.proxyName); details=\"answered by the proxy: CA page\"")
        let response = HTTPResponseHead(status: HTTPStatus(status), fields: fields)
        if head.method == .head || body.isEmpty { return [.head(response), .end(trailers: nil)] }
        return [.head(response), .body(body), .end(trailers: nil)]
    }

    // MARK: The page

    /// `AB:CD:…`, the form certificate viewers on phones show.
    static func colonHex(_ hex: String) -> String {
        var pairs: [String] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) ?? hex.endIndex
            pairs.append(hex[index..<next].uppercased())
            index = next
        }
        return pairs.joined(separator: ":")
    }

    static func escaped(_ text: String) -> String { text.htmlEscaped }

    private static func render(_ authority: CertificateAuthority, downloads: [Download]) -> String {
        func link(_ format: CAExportFormat) -> String {
            let path = downloads.first { $0.format == format }?.path ?? "/"
            return "<a href=\"\(escaped(path))\">\(escaped(String(path.dropFirst())))</a>"
        }
        let name = escaped(authority.commonName)
        let rows = downloads.map { download -> String in
            let what: String
            switch download.format {
            case .pem: what = "PEM: Linux, Firefox, curl"
            case .der: what = "DER: Android, Windows"
            case .p12: what = "PKCS#12 (certificate only, no password): Windows, macOS"
            case .mobileconfig: what = "Configuration profile: iPhone, iPad, macOS"
            case .androidSystem: what = "Android system store file (rooted emulators)"
            }
            return "<li>\(link(download.format)) &mdash; \(what)</li>"
        }.joined(separator: "\n")
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Intact CA</title>
            <style>
            body { font-family: system-ui, sans-serif; margin: 1em auto; max-width: 46em; padding: 0 1em; line-height: 1.4; }
            code { word-break: break-all; background: #f2f2f2; padding: 0 .2em; }
            h2 { margin-top: 1.4em; border-bottom: 1px solid #ddd; }
            </style>
            </head>
            <body>
            <h1>Install Intact's development CA</h1>
            <p>This device reaches <b>Intact</b>, an intercepting test proxy. To let it read HTTPS traffic,
            install and trust this CA: <b>\(name)</b>. Remove it when testing is over.</p>
            <p>SHA-256 fingerprint: <code id="sha256">\(colonHex(authority.sha256Fingerprint))</code><br>
            Leaf key SPKI (Chromium <code>--ignore-certificate-errors-spki-list</code>): <code id="spki">\(escaped(authority.leafSPKIHash))</code></p>
            <h2>Download</h2>
            <ul>
            \(rows)
            </ul>
            <h2 id="android">Android</h2>
            <ol><li>Download \(link(.der)).</li>
            <li>Settings &rarr; Security &rarr; Encryption &amp; credentials &rarr; Install a certificate &rarr; CA certificate; pick the file.</li>
            <li>Apps trust user CAs only when their <code>network_security_config</code> says so (debug builds:
            <code>&lt;debug-overrides&gt;&lt;trust-anchors&gt;&lt;certificates src=&quot;user&quot;/&gt;</code>).</li></ol>
            <h2 id="ios">iPhone and iPad</h2>
            <ol><li>Open \(link(.mobileconfig)) in Safari and allow the download.</li>
            <li>Settings &rarr; Profile Downloaded &rarr; Install.</li>
            <li>Settings &rarr; General &rarr; About &rarr; Certificate Trust Settings: turn on full trust for <b>\(name)</b>.</li></ol>
            <h2 id="macos">macOS</h2>
            <ol><li>Download \(link(.pem)) and open it in Keychain Access (System keychain).</li>
            <li>Double-click the certificate &rarr; Trust &rarr; When using this certificate: Always Trust.</li></ol>
            <h2 id="windows">Windows</h2>
            <ol><li>Download \(link(.p12)) (or \(link(.der))) and open it.</li>
            <li>Import it for the current user into <b>Trusted Root Certification Authorities</b>.</li></ol>
            <h2 id="linux">Linux</h2>
            <ol><li>Download \(link(.pem)).</li>
            <li>Debian and Ubuntu: <code>sudo cp intact-ca.pem /usr/local/share/ca-certificates/intact-ca.crt &amp;&amp; sudo update-ca-certificates</code>.</li></ol>
            <h2 id="firefox">Firefox</h2>
            <ol><li>Download \(link(.pem)).</li>
            <li>Settings &rarr; Privacy &amp; Security &rarr; Certificates &rarr; View Certificates &rarr; Authorities &rarr; Import;
            tick &ldquo;Trust this CA to identify websites&rdquo;.</li></ol>
            </body>
            </html>

            """
    }
}
