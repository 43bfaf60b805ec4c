import HTTP

/// What the proxy does next with one leg of an exchange, in order.
///
/// The proxy carries the outputs out one after the other: a `.network(.delay)`
/// holds back every later output of the same leg for that long.
public enum FaultOutput<Part: Sendable & Hashable>: Sendable, Hashable {
    /// Send this part on (the request upstream, the response to the client).
    case forward(Part)
    /// Send this response to the client instead: on the request leg the server
    /// is never asked; on the response leg the server's response is dropped.
    /// Later parts of the leg produce no output; the proxy reads and discards them.
    case answer([HTTPResponsePart])
    /// Carry out a network command at this point.
    case network(NetworkCommand)
    /// The exchange fails here, cleanly, for this reason: nothing of the
    /// message was sent yet (a buffering action holds the head back), so the
    /// proxy answers with an error of its own and records the reason.
    case fail(FaultFailure)
}

public typealias RequestFaultOutput = FaultOutput<HTTPRequestPart>
public typealias ResponseFaultOutput = FaultOutput<HTTPResponsePart>

/// A network-level fault for the proxy to carry out; the engine decides
/// nothing about sockets.
public enum NetworkCommand: Sendable, Hashable, CustomStringConvertible {
    /// Wait this long before carrying out the leg's next output.
    case delay(Duration)
    /// Send the rest of this message in this direction at most this fast.
    case throttle(bytesPerSecond: Int)
    /// Reset the client's connection now (TCP RST; on HTTP/2 the proxy may
    /// reset just the stream) and abandon the upstream exchange. The point
    /// says where in the message this happens, for the record.
    case reset(ResetPoint)
    /// Close the client's connection now, without answering.
    case closeSilently
    /// Send nothing more and keep the connection open: the client times out.
    case stall

    public var description: String {
        switch self {
        case .delay(let d): return "delay \(d.milliseconds) ms"
        case .throttle(let bps): return "throttle to \(bps) bytes/s"
        case .reset(let point): return "reset \(point)"
        case .closeSilently: return "close without answering"
        case .stall: return "stall"
        }
    }
}

extension Duration {
    /// Whole milliseconds (truncated).
    var milliseconds: Int64 {
        let (s, atto) = components
        return s * 1000 + atto / 1_000_000_000_000_000
    }
}

/// Why an exchange failed inside the fault engine.
public struct FaultFailure: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    public var rule: String
    public var action: FaultActionKind
    public var leg: FaultLeg
    public var reason: String

    public var description: String { "rule \"\(rule)\" (\(action), \(leg)): \(reason)" }
}

/// One fault applied to an exchange or connection, for its record.
public struct AppliedFault: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The rule's name (a preset's rules carry the preset's name).
    public var rule: String
    public var action: FaultActionKind
    /// The leg acted on; nil for a connection (TLS) fault.
    public var leg: FaultLeg?
    /// What changed, in words: "removed 3 Set-Cookie fields (JSESSIONID, …)".
    public var change: String

    public init(rule: String, action: FaultActionKind, leg: FaultLeg?, change: String) {
        self.rule = rule
        self.action = action
        self.leg = leg
        self.change = change
    }

    public var description: String { "\(rule): \(action) on \(leg?.rawValue ?? "connection"): \(change)" }
}

/// A TLS fault for the proxy's handshake with a client.
public enum TLSFaultCommand: Sendable, Hashable {
    /// Ask for a client certificate and accept only one signed by the CA in
    /// this PEM file, or by the proxy's own CA when nil.
    case requireClientCertificate(caFile: String?)
    /// Present a server certificate minted by a throwaway CA the client does not trust.
    case presentUnknownCA
}

/// The faults for one client connection, decided when it is accepted.
public struct ConnectionFaults: Sendable, Hashable {
    public var tls: [TLSFaultCommand]
    public var applied: [AppliedFault]
}
