/// One row of the table of what an intermediary product changes and the
/// directive that fixes it: the change as `intact verify` names it (a field
/// added, Host changed…), the product's setting that causes it, and the fix.
/// Every row names the example scenario (`Examples/loadbalancers/<kind>/<name>`)
/// whose run shows the change: only changes a scenario verified are in the
/// table, and a change no row matches gets no guess.
public struct IntermediaryDirective: Hashable, Sendable {
    /// What a row matches among a hop's differences.
    public enum Change: Hashable, Sendable {
        /// A field of the request or the response added, removed or changed (lowercased name).
        case field(MessageSide, MessageDifference.Kind, String)
        /// The request's authority changed (the Host field, or `:authority`).
        case hostChanged
        /// The response's status changed and it carries this field (lowercased), added by the product.
        case statusReplacedWith(field: String)
        /// A cookie's attribute changed (`Set-Cookie`'s Path): `cookie-changed` with this text fragment.
        case cookieAttribute(String)
    }

    public enum MessageSide: String, Hashable, Sendable { case request, response }

    /// The kind name (`apache`, `varnish`), as `intact scenario` and `verify --intermediary` name it.
    public var product: String
    public var change: Change
    /// Why the product does it: `Varnish's builtin VCL`.
    public var cause: String
    /// What to write instead: `unset resp.http.Via in vcl_deliver`.
    public var fix: String
    /// The example scenario whose run shows the change (`varnish/defaults`).
    public var verifiedBy: String

    public init(_ product: String, _ change: Change, cause: String, fix: String, verifiedBy: String) {
        self.product = product
        self.change = change
        self.cause = cause
        self.fix = fix
        self.verifiedBy = verifiedBy
    }

    /// Whether `difference`, found in the `side` message of a hop, is this row's change.
    public func matches(_ difference: MessageDifference, side: MessageSide, status: MessageDifference?) -> Bool {
        switch change {
        case let .field(wantedSide, kind, field):
            return side == wantedSide && difference.kind == kind && difference.field == field
        case .hostChanged:
            guard side == .request, difference.kind == .targetChanged else { return false }
            return Self.authority(difference.before) != Self.authority(difference.after)
        case let .statusReplacedWith(field):
            return side == .response && status != nil && difference.kind == .fieldAdded && difference.field == field
        case let .cookieAttribute(fragment):
            return side == .response && difference.kind == .cookieChanged && difference.text.contains(fragment)
        }
    }

    /// `host:port` of a `scheme://authority/path` target; nil for another form.
    static func authority(_ target: String?) -> String? {
        guard let target, let start = target.range(of: "://") else { return nil }
        let rest = target[start.upperBound...]
        return String(rest.prefix { $0 != "/" && $0 != "?" })
    }
}
