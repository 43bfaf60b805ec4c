import Glibc
import Synchronization

/// The listening sockets of a run, one per listener on the path,
/// reserved once (bound and listening on 127.0.0.1) before anything starts
/// and handed to the child that serves each: `intact server|proxy
/// --listen-fd 3`, HAProxy's `bind fd@3`, nginx's `NGINX="3;"`. A port is
/// never released and bound again, so no other process can take it between
/// the reservation and the child's start; connections that arrive before the
/// child accepts wait in the backlog.
///
/// The runner holds each socket until the child that serves it owns a copy
/// (`handedOver(_:)` after the spawn), then closes its own, so the port
/// closes when that child ends. Whatever is still held closes with this value.
/// Safe to use from any thread.
public final class ReservedListeners: Sendable {
    public let ports: ScenarioPorts
    /// The runner's descriptors, by role, until handed over.
    private let descriptors: Mutex<[ProcessCommand.Role: Int32]>

    /// Reserves `fixed` (throws `.portInUse` naming the first one taken), or
    /// four free ports the kernel picks when nil.
    public init(fixed: ScenarioPorts?) throws(ScenarioError) {
        var reserved: [ProcessCommand.Role: Int32] = [:]
        var success = false
        defer { if !success { reserved.values.forEach { _ = close($0) } } }
        let roles = ScenarioPorts(base: 0).listeners.map(\.role)
        for role in roles {
            let port = fixed?.listeners.first { $0.role == role }?.port ?? 0
            if fixed != nil { try ScenarioPorts.checkRange(port, role: role) }
            let descriptor: Int32
            do {
                descriptor = try LoopbackSocket.listening(port: port)
            } catch {
                guard fixed != nil else { throw error }
                throw .portInUse(port: port, role: role.displayName)
            }
            reserved[role] = descriptor
        }
        func port(_ role: ProcessCommand.Role) throws(ScenarioError) -> Int {
            try LoopbackSocket.localPort(reserved[role] ?? -1)
        }
        ports = ScenarioPorts(tapA: try port(.tapA), loadBalancer: try port(.loadBalancer),
                              tapB: try port(.tapB), server: try port(.server), inner: try port(.innerIntermediary))
        descriptors = Mutex(reserved)
        success = true
    }

    /// The runner's descriptor of `role`'s socket, nil once handed over.
    public func descriptor(_ role: ProcessCommand.Role) -> Int32? {
        descriptors.withLock { $0[role] }
    }

    /// Closes the runner's copy of `role`'s socket: call it once the child
    /// that serves it was spawned with the socket (it holds its own copy),
    /// or to leave the port closed on purpose (`--load-balancer-down`).
    public func handedOver(_ role: ProcessCommand.Role) {
        if let descriptor = descriptors.withLock({ $0.removeValue(forKey: role) }) { close(descriptor) }
    }

    deinit {
        descriptors.withLock { $0.values.forEach { _ = close($0) } }
    }
}
