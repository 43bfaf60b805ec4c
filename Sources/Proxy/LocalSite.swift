import Evidence
import HTTP

/// Pages the proxy serves itself instead of forwarding (the CA page): the
/// narrow entry point through which the proxy's layers reach them.
///
/// A forward-mode request is addressed to the proxy when it names the
/// reserved host `intact.proxy` (`http://intact.proxy/…`, any path), when it
/// is in origin form (`GET / HTTP/1.1` sent straight to the proxy's address,
/// as a browser does for `http://PROXY:PORT/`), or when its absolute target
/// is the proxy's own listen address. Such a request is answered by
/// `response(to:)` through an exchange hook, never forwarded, and recorded
/// like any other exchange (one downstream leg, no upstream leg).
///
/// `response(to:)` is called on the connection's loop: it must not block.
public protocol LocalSite: Sendable {
    /// The whole answer to a request addressed to the proxy.
    func response(to head: HTTPRequestHead) -> [HTTPResponsePart]
}

/// The host name a device opens to reach the proxy's own pages.
public enum LocalSiteAddress {
    public static let host = "intact.proxy"

    /// True when a forward-mode request on the plain connection is for the proxy itself.
    static func isAddressed(_ head: HTTPRequestHead, loopGuard: LoopGuard) -> Bool {
        switch head.targetForm {
        case .origin:
            return true
        case .absolute:
            guard head.scheme?.lowercased() == "http",
                  let target = head.authority.flatMap({ UpstreamTarget(authority: $0, scheme: .http) }) else { return false }
            return target.host == host || loopGuard.refuses(target)
        case .authority, .asterisk:
            return false
        }
    }
}

/// The exchange hook that answers a request addressed to the proxy with
/// its local site's response; nothing reaches an upstream.
final class LocalSiteHook: ExchangeHook {
    private let site: any LocalSite

    init(site: any LocalSite) {
        self.site = site
    }

    func request(_ part: HTTPRequestPart) -> [HookOutput<HTTPRequestPart>] {
        guard case .head(let head) = part else { return [] }
        return [.answer(site.response(to: head))]
    }
}
