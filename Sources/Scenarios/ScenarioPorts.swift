import Foundation
import Glibc

/// The loopback ports of a scenario, one per listener on the path
/// `client → tap A → intermediary → tap B → server`, and one for an
/// intermediary's inner process (Varnish behind hitch). Everything listens
/// on 127.0.0.1 only.
public struct ScenarioPorts: Hashable, Sendable {
    public var tapA: Int
    public var loadBalancer: Int
    public var tapB: Int
    public var server: Int
    /// The intermediary's inner port (`{{INNER_PORT}}`), behind `loadBalancer`.
    public var inner: Int

    public init(tapA: Int, loadBalancer: Int, tapB: Int, server: Int, inner: Int? = nil) {
        self.tapA = tapA
        self.loadBalancer = loadBalancer
        self.tapB = tapB
        self.server = server
        self.inner = inner ?? max(tapA, loadBalancer, tapB, server) + 1
    }

    /// `base` for tap A, then the load balancer, tap B, the server and the inner port on the next four.
    public init(base: Int) {
        self.init(tapA: base, loadBalancer: base + 1, tapB: base + 2, server: base + 3, inner: base + 4)
    }

    /// The listeners in start order (server first) with the role each serves.
    public var listeners: [(role: ProcessCommand.Role, port: Int)] {
        [(.server, server), (.tapB, tapB), (.innerIntermediary, inner), (.loadBalancer, loadBalancer), (.tapA, tapA)]
    }

    /// Five distinct ports the kernel reports free now (bound together to port 0, then released),
    /// for a run a user starts by hand (`intact scenario prepare`), whose
    /// services bind their own ports. Another process could take one
    /// meanwhile; the runner never uses this, it reserves sockets (`ReservedListeners`).
    public static func ephemeral() throws(ScenarioError) -> ScenarioPorts {
        var descriptors: [Int32] = []
        defer { descriptors.forEach { _ = close($0) } }
        var ports: [Int] = []
        for _ in 0..<5 {
            let descriptor = try LoopbackSocket.bound(port: 0)
            descriptors.append(descriptor)
            ports.append(try LoopbackSocket.localPort(descriptor))
        }
        return ScenarioPorts(tapA: ports[0], loadBalancer: ports[1], tapB: ports[2], server: ports[3], inner: ports[4])
    }

    /// Throws `.portInUse` naming the first port something already listens on
    /// (or holds bound), and `.portsUnavailable` for a port outside 1...65535.
    public func checkFree() throws(ScenarioError) {
        for (role, port) in listeners {
            try Self.checkRange(port, role: role)
            let descriptor: Int32
            do {
                descriptor = try LoopbackSocket.bound(port: port)
            } catch {
                throw .portInUse(port: port, role: role.displayName)
            }
            close(descriptor)
        }
    }
}

extension ScenarioPorts {
    /// Throws `.portsUnavailable` for a port outside 1...65535.
    static func checkRange(_ port: Int, role: ProcessCommand.Role) throws(ScenarioError) {
        guard (1...65535).contains(port) else {
            throw .portsUnavailable(reason: "port \(port) for \(role.displayName) is not between 1 and 65535")
        }
    }
}

/// Blocking IPv4 loopback socket helpers: port checks, reservations, and whether a port listens.
enum LoopbackSocket {
    /// A TCP socket bound (not listening) to 127.0.0.1:`port`, with
    /// SO_REUSEADDR as servers set it, so a port in TIME_WAIT counts as free.
    static func bound(port: Int) throws(ScenarioError) -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .portsUnavailable(reason: "socket: " + errorText()) }
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let reason = errorText()
            close(descriptor)
            throw .portsUnavailable(reason: "bind 127.0.0.1:\(port): \(reason)")
        }
        return descriptor
    }

    /// A socket bound to 127.0.0.1:`port` (0: one the kernel picks) and
    /// listening, close-on-exec: a reservation to hand to a child.
    static func listening(port: Int) throws(ScenarioError) -> Int32 {
        let descriptor = try bound(port: port)
        guard listen(descriptor, 1024) == 0 else {
            let reason = errorText()
            close(descriptor)
            throw .portsUnavailable(reason: "listen on 127.0.0.1:\(port): \(reason)")
        }
        return descriptor
    }

    static func localPort(_ descriptor: Int32) throws(ScenarioError) -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard result == 0 else { throw .portsUnavailable(reason: "getsockname: " + errorText()) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether a socket listens on 127.0.0.1:`port` (or on every IPv4
    /// address) now, read from `/proc/net/tcp`. Passive on purpose: a probe
    /// connection would show up in the listener's logs and recordings as a
    /// client that said nothing.
    static func isListening(port: Int) -> Bool {
        guard let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8) else { return false }
        let suffix = ":" + String(format: "%04X", port)
        let addresses: Set<String> = ["0100007F" + suffix, "00000000" + suffix]
        return table.split(separator: "\n").dropFirst().contains { line in
            let columns = line.split(separator: " ")
            // Columns: sl, local_address, rem_address, st (0A = LISTEN), …
            return columns.count > 3 && columns[3] == "0A" && addresses.contains(String(columns[1]))
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        return address
    }

    private static func errorText() -> String {
        String(cString: strerror(errno))
    }
}
