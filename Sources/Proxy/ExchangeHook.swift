import Evidence
import HTTP

/// An add-on's part in one exchange, mitmproxy style: it sees each piece of
/// the request on its way upstream and each piece of the response on its way
/// back, and says what the proxy does with it; at the end it may annotate the
/// exchange's record.
///
/// The named hook points are the calls: request head / request body chunk /
/// request end are `request(_:)` with `.head`, `.body`, `.end`; the same for
/// the response with `response(_:)`; `failed(_:)` is the error hook and
/// `finish(_:)` the end hook.
///
/// Hooks of one exchange form a chain in the order the add-ons were given: a
/// `.forward(part)` of one hook is the input of the next; any other output
/// ends that part's way through the chain. The recorder is not in the chain:
/// it sees each part before the first hook (as received) and after the last
/// (as sent), so a record always shows what a hook changed.
///
/// Called only on the exchange's event loop, never concurrently; one hook
/// object serves one exchange.
public protocol ExchangeHook: AnyObject {
    /// A request part as the previous hook passed it on; returns what to do.
    /// Interim (1xx) response heads go through `response(_:)` too.
    func request(_ part: HTTPRequestPart) -> [HookOutput<HTTPRequestPart>]
    /// A response part as the previous hook passed it on; returns what to do.
    func response(_ part: HTTPResponsePart) -> [HookOutput<HTTPResponsePart>]
    /// The exchange broke (before `finish`): an upstream that could not be
    /// reached, a reset, a client that went away.
    func failed(_ error: ProxyError)
    /// The exchange is over and this is its record: the place to add the
    /// auth-flow step, the faults applied, … Called exactly once, last.
    func finish(_ record: inout ExchangeRecord)
    /// True for a hook that only watches: it implements `watchRequest(_:)`
    /// and `watchResponse(_:)`, not `request(_:)` or `response(_:)` (whose
    /// defaults call them and forward the part unchanged). When every hook
    /// of an exchange only watches, the flow calls the watch methods
    /// directly and builds no output list per part. Must not change during
    /// the exchange.
    var onlyWatches: Bool { get }
    /// A request part as it goes by (see `onlyWatches`).
    func watchRequest(_ part: HTTPRequestPart)
    /// A response part as it goes by (see `onlyWatches`).
    func watchResponse(_ part: HTTPResponsePart)
}

extension ExchangeHook {
    public func request(_ part: HTTPRequestPart) -> [HookOutput<HTTPRequestPart>] {
        watchRequest(part)
        return [.forward(part)]
    }
    public func response(_ part: HTTPResponsePart) -> [HookOutput<HTTPResponsePart>] {
        watchResponse(part)
        return [.forward(part)]
    }
    public var onlyWatches: Bool { false }
    public func watchRequest(_ part: HTTPRequestPart) {}
    public func watchResponse(_ part: HTTPResponsePart) {}
    public func failed(_ error: ProxyError) {}
    public func finish(_ record: inout ExchangeRecord) {}
}

/// What a hook wants done with one message part (the shape of the fault
/// engine's outputs, so it plugs in as one hook).
public enum HookOutput<Part: Sendable & Hashable>: Sendable, Hashable {
    /// Pass this part on (to the next hook, then to the other leg).
    case forward(Part)
    /// Answer the client with this response instead. On the request leg the
    /// server is not asked (or is abandoned); on the response leg the
    /// server's response is dropped. Later parts of the leg are discarded.
    case answer([HTTPResponsePart])
    /// Fail the exchange cleanly: the proxy answers 502 with this reason (or
    /// resets the client's stream if a response head already went out).
    case fail(reason: String)
    /// Reset the client's stream (HTTP/2) or connection (HTTP/1.1) now and
    /// abandon the upstream exchange.
    case reset(reason: String)
    /// Hold this leg's later outputs back this long (a timer on the loop);
    /// reading the leg pauses meanwhile.
    case delay(Duration)
    /// Send the rest of this leg's body at most this fast: body chunks go
    /// out in slices of a tenth of a second's worth, each followed by a pause.
    case throttle(bytesPerSecond: Int)
    /// Close the client's connection now (FIN, not RST) without answering,
    /// and abandon the upstream exchange.
    case close(reason: String)
    /// Send nothing more and keep the connection open: the exchange ends
    /// only when the client gives up (or the proxy stops).
    case stall(reason: String)
}

/// Makes the hooks of each exchange; one add-on serves the whole proxy.
///
/// `hook(for:)` is called on the exchange's event loop, once per exchange,
/// when its request head has arrived; nil means "not interested".
/// `connectionAccepted(_:)` is called on the connection's loop, once per
/// client connection, before anything is read from it (the TLS client
/// hello hook): it may change the proxy's handshake with that client.
public protocol ProxyAddon: Sendable {
    func hook(for exchange: ExchangeHookContext) -> (any ExchangeHook)?
    /// How the proxy's TLS handshake with this client differs, and the
    /// faults to write into every record of the connection.
    func connectionAccepted(_ connection: ConnectionID) -> ConnectionDirectives
    /// True when `connectionAccepted` may ask for an untrusted certificate,
    /// so the proxy makes its throwaway CA when it starts (off the loops).
    var mayPresentUntrustedCertificates: Bool { get }
    /// Options to name in the recording header (values of add-ons that use
    /// the same key are joined with commas, in add-on order).
    var recordedOptions: [String: String] { get }
}

extension ProxyAddon {
    public func connectionAccepted(_ connection: ConnectionID) -> ConnectionDirectives { ConnectionDirectives() }
    public var mayPresentUntrustedCertificates: Bool { false }
    public var recordedOptions: [String: String] { [:] }
}

/// What an add-on knows about an exchange when its hook is made.
public struct ExchangeHookContext: Sendable {
    public var id: ExchangeID
    /// The request head as received from the client.
    public var request: HTTPRequestHead
    /// Where the proxy will send it.
    public var target: UpstreamTarget
    /// The tap that records it.
    public var tap: String
}
