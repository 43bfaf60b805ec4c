/// Finding the table's rows in a report: which hops are the intermediary's,
/// which product it is, and which rows its differences match.
extension IntermediaryDirective {
    /// One matched row, with the first difference it explains (`Via added (1.1 varnish (Varnish/7.1))`).
    public struct Hint: Hashable, Sendable, CustomStringConvertible {
        public var difference: String
        public var directive: IntermediaryDirective

        /// `Via added (…): Varnish's builtin VCL — fix: unset resp.http.Via in vcl_deliver (as in Examples/loadbalancers/varnish/defaults)`.
        public var description: String {
            "\(difference): \(directive.cause) — fix: \(directive.fix) (as in Examples/loadbalancers/\(directive.verifiedBy))"
        }
    }

    /// How a product names itself in the Server or Via values it adds, or in a field only it adds.
    static let signatures: [(product: String, valueFragments: [String], fields: [String])] = [
        ("trafficserver", ["ATS/", "traffic_server"], []),
        ("varnish", ["Varnish/", "varnish"], ["x-varnish"]),
        ("squid", ["squid/"], ["x-squid-error"]),
        ("nghttpx", ["nghttpx"], []),
        ("caddy", ["Caddy"], []),
        ("apache", ["Apache/"], []),
        ("nginx", ["nginx"], []),
    ]

    /// The products the table has rows for.
    public static var products: [String] {
        var seen: [String] = []
        for row in table where !seen.contains(row.product) { seen.append(row.product) }
        return seen
    }

    /// The hops an intermediary sits on: the network hops between two taps
    /// that are neither the client nor the server (`tap-a → tap-b`).
    public static func intermediaryHops(in report: VerificationReport) -> [Int] {
        let ends: Set<String> = ["client", "server"]
        return report.path.hops.filter { $0.kind == .network && !ends.contains($0.from.tap) && !ends.contains($0.to.tap) }
            .map(\.number)
    }

    /// The product the intermediary's hops show by name: a Server or Via
    /// value it added or put in (`ATS/9.2.9`, `1.1 varnish (Varnish/7.1)`),
    /// or a field only it adds (`X-Varnish`). Nil when none shows.
    public static func productSeen(in report: VerificationReport) -> String? {
        let hops = Set(intermediaryHops(in: report))
        var differences: [MessageDifference] = []
        for exchange in report.exchanges {
            for cell in exchange.hops where hops.contains(cell.hop) {
                let all: [MessageDifference] = cell.request.differences + cell.response.differences
                differences += all.filter { $0.kind == .fieldAdded || $0.kind == .fieldChanged }
            }
        }
        for (product, fragments, fields) in signatures {
            for difference in differences {
                if let field = difference.field, fields.contains(field) { return product }
                guard difference.field == "server" || difference.field == "via", let value = difference.after else { continue }
                if fragments.contains(where: { value.contains($0) }) { return product }
            }
        }
        return nil
    }

    /// The rows of `product` that the intermediary's hops' failing
    /// differences match, each once, in the order first met.
    public static func hints(in report: VerificationReport, product: String) -> [Hint] {
        let rows = table.filter { $0.product == product }
        let hops = Set(intermediaryHops(in: report))
        var hints: [Hint] = []
        for exchange in report.exchanges {
            for cell in exchange.hops where hops.contains(cell.hop) {
                let status = cell.response.differences.first { $0.kind == .statusChanged }
                for (side, message) in [(MessageSide.request, cell.request), (.response, cell.response)] {
                    for difference in message.differences where difference.toleratedBy == nil {
                        for row in rows where row.matches(difference, side: side, status: status)
                            && !hints.contains(where: { $0.directive == row }) {
                            hints.append(Hint(difference: row.describe(difference, side: side), directive: row))
                        }
                    }
                }
            }
        }
        return hints
    }

    /// `request Host changed (127.0.0.1:1 → 127.0.0.1:2)` for a row about
    /// Host, else the side and the difference's own text.
    func describe(_ difference: MessageDifference, side: MessageSide) -> String {
        if change == .hostChanged, let before = Self.authority(difference.before), let after = Self.authority(difference.after) {
            return "request Host changed (\(before) → \(after))"
        }
        return "\(side.rawValue) \(difference.text)"
    }

    /// The report's "Likely causes" section for `product` (given, or seen
    /// in Server/Via when nil), or nil when no product is known or no row
    /// matches: an unknown change gets no guess.
    public static func section(for report: VerificationReport, product given: String?) -> String? {
        let product = given ?? productSeen(in: report)
        guard let product else { return nil }
        let hints = hints(in: report, product: product)
        guard !hints.isEmpty else { return nil }
        let source = given == nil ? "\(product), recognised in the Server or Via fields it added" : product
        return "Likely causes on the intermediary's hop (\(source)):\n"
            + hints.map { "  \($0)\n" }.joined()
    }
}
