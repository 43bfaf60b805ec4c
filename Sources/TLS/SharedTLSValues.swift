import Glibc

/// Values most TLS connections carry alike (the usual ALPN offers, version
/// lists and cipher names), handed out as one shared instance each instead
/// of a fresh array or string per connection, which an idle keep-alive
/// connection would keep for as long as it lives (Docs/performance.md#idle-connections).
/// A value not in the tables is returned as it is; the answer always equals the input.
enum SharedTLSValues {
    static let alpnOffers: [[String]] = [["h2", "http/1.1"], ["http/1.1"], ["h2"], ["http/1.1", "h2"]]
    static let versionLists: [[UInt16]] = [[0x0304, 0x0303], [0x0304], [0x0303], [0x0304, 0x0303, 0x0302, 0x0301]]
    static let cipherNames: [String] = [
        "TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256", "TLS_CHACHA20_POLY1305_SHA256",
        "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-ECDSA-AES128-GCM-SHA256",
        "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ]

    /// The shared array equal to `names`, or `names`.
    static func shared(_ names: [String]) -> [String] {
        alpnOffers.first { $0 == names } ?? names
    }

    /// The shared array equal to `versions`, or `versions`.
    static func shared(_ versions: [UInt16]) -> [UInt16] {
        versionLists.first { $0 == versions } ?? versions
    }

    /// The cipher name OpenSSL gives (a C string), shared when it is a usual one.
    static func cipherName(_ name: UnsafePointer<CChar>) -> String {
        let bytes = UnsafeRawBufferPointer(start: name, count: strlen(name))
        return cipherNames.first { $0.utf8.elementsEqual(bytes) } ?? String(cString: name)
    }
}
