import TLS

/// The ClientHello peek, which the proxy calls again each time more bytes
/// arrive: beyond "no crash", a hello found in the whole input must be found
/// the same in every longer prefix, and every shorter one must ask for more.
enum ClientHelloFuzzing {
    static func peek(_ bytes: [UInt8]) {
        let whole = ClientHelloPeek.inspect(bytes)
        guard case .clientHello = whole else { return }
        for cut in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 64)) {
            let prefix = ClientHelloPeek.inspect(Array(bytes.prefix(cut)))
            switch prefix {
            case .needMoreData:
                break
            case .clientHello:
                precondition(prefix == whole, "a prefix of \(cut) bytes reads another hello")
            case .notTLS(let reason):
                preconditionFailure("a prefix of \(cut) bytes of a valid hello was refused: \(reason)")
            }
        }
    }
}
