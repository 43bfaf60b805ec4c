/// The name of an action, as rule files and `AppliedFault.action` spell it.
public enum FaultActionKind: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case removeHeader = "remove-header"
    case addHeader = "add-header"
    case setHeader = "set-header"
    case renameHeader = "rename-header"
    case headerCase = "header-case"
    case removeSetCookie = "remove-set-cookie"
    case rewriteSetCookie = "rewrite-set-cookie"
    case foldSetCookie = "fold-set-cookie"
    case addSetCookie = "add-set-cookie"
    case removeCookie = "remove-cookie"
    case rewriteCookie = "rewrite-cookie"
    case replaceBody = "replace-body"
    case regexBody = "regex-body"
    case truncateBody = "truncate-body"
    case gzipBody = "gzip-body"
    case rechunkBody = "rechunk-body"
    case setStatus = "set-status"
    case answer
    case regexTarget = "regex-target"
    case rewriteURLs = "rewrite-urls"
    case gate
    case delay
    case throttle
    case reset
    case close
    case stall
    case requireClientCertificate = "require-client-certificate"
    case unknownCACertificate = "unknown-ca-certificate"

    public var description: String { rawValue }

    /// True for TLS actions, which apply to a whole connection.
    public var isConnectionLevel: Bool { self == .requireClientCertificate || self == .unknownCACertificate }

    /// The legs the action makes sense on (empty for TLS actions).
    public var legs: Set<FaultLeg> {
        switch self {
        case .removeSetCookie, .rewriteSetCookie, .foldSetCookie, .addSetCookie, .setStatus:
            return [.response]
        case .removeCookie, .rewriteCookie, .regexTarget, .gate:
            return [.request]
        case .requireClientCertificate, .unknownCACertificate:
            return []
        default:
            return [.request, .response]
        }
    }
}
