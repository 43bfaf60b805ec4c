import Wire

/// How many connections each client address holds, against a limit
/// (`--max-client-connections`): one client cannot take every descriptor.
/// Addresses are normalised (an IPv4-mapped client is its IPv4 address) and
/// counted without their port.
struct ClientConnectionLimit {
    let limit: Int
    private(set) var counts: [SocketAddress: Int] = [:]

    init(limit: Int) {
        self.limit = max(limit, 1)
    }

    /// Counts a new connection from `address`; false (and not counted) when
    /// that address already holds `limit`.
    mutating func admit(_ address: SocketAddress) -> Bool {
        let key = address.normalised.withPort(0)
        let held = counts[key, default: 0]
        guard held < limit else { return false }
        counts[key] = held + 1
        return true
    }

    /// A connection `admit` counted has ended.
    mutating func release(_ address: SocketAddress) {
        let key = address.normalised.withPort(0)
        guard let held = counts[key] else { return }
        counts[key] = held > 1 ? held - 1 : nil
    }
}
