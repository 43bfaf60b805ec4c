import Dispatch
import Glibc

/// Turns a host name into socket addresses.
///
/// `getaddrinfo(3)` blocks, so it runs on a side queue and the answer hops
/// back to the requesting loop. Some names are answered without any lookup:
/// - IP literals (`"127.0.0.1"`, `"::1"`, `"[::1]"`) — through `getaddrinfo`
///   with `AI_NUMERICHOST`, which never touches the network;
/// - `localhost` and `*.localhost` — `127.0.0.1` then `::1` (RFC 6761 §6.3);
/// - `*.invalid` — `.nameNotFound` (RFC 6761 §6.4);
/// - names that are not syntactically host names — `.invalidHostName`.
public enum Resolver {
    /// Side queue for blocking lookups; concurrent so one slow name does not hold up others.
    private static let lookupQueue = DispatchQueue(label: "intact.wire.resolver", attributes: .concurrent)

    /// Resolves `host` and calls `completion` on `loop`, always later, with at
    /// least one address (each carrying `port`, duplicates removed, order
    /// kept) or the reason there is none. Callable from any thread.
    public static func resolve(
        _ host: String, port: UInt16, on loop: EventLoop,
        _ completion: @escaping @Sendable (Result<[SocketAddress], WireError>) -> Void
    ) {
        switch plan(for: host) {
        case .answer(let result):
            let withPort = result.map { addresses in addresses.map { $0.withPort(port) } }
            loop.execute { completion(withPort) }
        case .lookup(let name, let numeric):
            lookupQueue.async {
                let result = lookUp(name, numericOnly: numeric).map { addresses in addresses.map { $0.withPort(port) } }
                loop.execute { completion(result) }
            }
        }
    }

    /// Resolves `host` on the calling thread: the same answers as
    /// `resolve(_:port:on:_:)`. Blocks on DNS: never call on a loop (it is
    /// for start-up, such as the names a proxy is told to listen on).
    public static func resolveBlocking(_ host: String, port: UInt16) -> Result<[SocketAddress], WireError> {
        let result: Result<[SocketAddress], WireError>
        switch plan(for: host) {
        case .answer(let answer): result = answer
        case .lookup(let name, let numeric): result = lookUp(name, numericOnly: numeric)
        }
        return result.map { addresses in addresses.map { $0.withPort(port) } }
    }

    /// How a host will be resolved.
    enum Plan: Equatable {
        /// Known without `getaddrinfo` (addresses carry port 0).
        case answer(Result<[SocketAddress], WireError>)
        /// Ask `getaddrinfo` about `name`; `numeric` for IP literals.
        case lookup(name: String, numeric: Bool)
    }

    /// Decides, without blocking, whether `host` needs a lookup.
    static func plan(for host: String) -> Plan {
        if host.hasPrefix("[") && host.hasSuffix("]") && host.count > 2 {
            let inner = String(host.dropFirst().dropLast())
            return inner.contains(":") ? .lookup(name: inner, numeric: true) : .answer(.failure(.invalidHostName(host)))
        }
        if host.contains(":") || isIPv4Literal(host) {
            return .lookup(name: host, numeric: true)
        }
        guard isHostName(host) else { return .answer(.failure(.invalidHostName(host))) }
        let name = (host.hasSuffix(".") ? String(host.dropLast()) : host).lowercased()
        if name == "localhost" || name.hasSuffix(".localhost") {
            return .answer(.success([.loopbackIPv4(port: 0), .loopbackIPv6(port: 0)]))
        }
        if name == "invalid" || name.hasSuffix(".invalid") {
            return .answer(.failure(.nameNotFound(host)))
        }
        return .lookup(name: host, numeric: false)
    }

    /// Four dot-separated decimal parts: treated as a literal, never as a name.
    private static func isIPv4Literal(_ host: String) -> Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }
    }

    /// Letters, digits, `-` and `_` in dot-separated labels of 1–63 bytes,
    /// at most 253 bytes in all, one optional trailing dot.
    private static func isHostName(_ host: String) -> Bool {
        let name = host.hasSuffix(".") ? host.dropLast() : Substring(host)
        guard !name.isEmpty, name.utf8.count <= 253 else { return false }
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.utf8.allSatisfy { byte in
                    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                        || byte == 0x2D || byte == 0x5F
                }
        }
    }

    /// glibc's `EAI_NODATA` and `EAI_ADDRFAMILY` ("no address for this
    /// name / family"), GNU extensions the Glibc module does not export.
    private static let gnuNoData: Int32 = -5
    private static let gnuAddressFamily: Int32 = -9

    /// Blocking `getaddrinfo` for TCP addresses of any family. Never call on a loop.
    static func lookUp(_ name: String, numericOnly: Bool) -> Result<[SocketAddress], WireError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        hints.ai_flags = numericOnly ? AI_NUMERICHOST : 0
        var list: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(name, nil, &hints, &list)
        defer { if let list { freeaddrinfo(list) } }
        guard code == 0 else {
            switch code {
            case EAI_NONAME, gnuNoData, gnuAddressFamily:
                return .failure(numericOnly ? .invalidHostName(name) : .nameNotFound(name))
            case EAI_SYSTEM:
                return .failure(.system(call: "getaddrinfo", errno: errno))
            default:
                return .failure(.resolutionFailed(host: name, code: code, message: String(cString: gai_strerror(code))))
            }
        }
        var addresses: [SocketAddress] = []
        var node = list
        while let entry = node {
            if let raw = entry.pointee.ai_addr, let address = SocketAddress(UnsafePointer(raw)),
               !addresses.contains(address) {
                addresses.append(address)
            }
            node = entry.pointee.ai_next
        }
        return addresses.isEmpty ? .failure(.nameNotFound(name)) : .success(addresses)
    }
}
