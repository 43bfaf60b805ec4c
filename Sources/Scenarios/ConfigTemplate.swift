/// A load balancer configuration with `{{NAME}}` placeholders that the
/// runner fills with the run's ports and files. Placeholder names are upper
/// case letters, digits and underscores; anything else between `{{` and
/// `}}`, an unterminated `{{`, or a name the runner does not define is an
/// error naming the line, raised before anything starts.
public struct ConfigTemplate: Sendable {
    /// The placeholders every kind's templates may use, with what each stands
    /// for (shown by `--help` and the docs); a kind adds its own
    /// (`IntermediaryKind.extraPlaceholders`, meanings in `kindPlaceholders`).
    public static let commonPlaceholders: [(name: String, meaning: String)] = [
        ("LISTEN", "where the load balancer listens: fd@3 for HAProxy under the runner (the socket it hands over), "
            + "else LISTEN_ADDRESS:LISTEN_PORT"),
        ("LISTEN_ADDRESS", "the address the load balancer listens on (127.0.0.1)"),
        ("LISTEN_PORT", "the load balancer's port (tap A forwards to it)"),
        ("UPSTREAM_ADDRESS", "tap B's address (127.0.0.1)"),
        ("UPSTREAM_PORT", "tap B's port (the load balancer forwards to it)"),
        ("UPSTREAM_NAME", "the name tap B's certificate is checked against"),
        ("PUBLIC_HOST", "the host the client uses (tap A's)"),
        ("PUBLIC_PORT", "the port the client uses (tap A's)"),
        ("PUBLIC_ORIGIN", "https://PUBLIC_HOST:PUBLIC_PORT, the origin the client and the server's external URL use"),
        ("CERT", "the load balancer's certificate (PEM), issued by the run's CA"),
        ("KEY", "its private key (PEM)"),
        ("CERT_BUNDLE", "certificate and key in one PEM file (HAProxy's crt)"),
        ("CA", "the run's CA certificate (PEM): trust it for tap B, and for client certificates"),
        ("RUNDIR", "the run directory (logs, pid and temporary files)"),
        ("SCENARIO_DIR", "the scenario's own directory (error pages and other files it ships)"),
        ("WORKDIR", "the product's own directory in the run directory (RUNDIR/<kind>): its pid, logs, cache and state"),
        ("CONFIG", "the rendered configuration file (in commands: nginx -c {{CONFIG}})"),
    ]

    /// The placeholders only some kinds define, with what each stands for.
    public static let kindPlaceholders: [(name: String, meaning: String)] = [
        ("INNER_PORT", "varnish: Varnish's own port behind hitch (hitch forwards plain HTTP to it)"),
        ("BUMP_CA_CERT", "squid: the CA certificate Squid signs bumped connections' certificates with (tap A trusts it)"),
        ("BUMP_CA_KEY", "squid: that CA's private key"),
    ]

    public let file: String
    public let text: String

    public init(file: String, text: String) {
        self.file = file
        self.text = text
    }

    /// The text with every placeholder replaced by its value in `values`.
    /// Throws `.configTemplate` for the first malformed or unknown placeholder.
    public func render(_ values: [String: String]) throws(ScenarioError) -> String {
        var output = ""
        var line = 1
        var rest = Substring(text)
        while let open = rest.range(of: "{{") {
            let before = rest[..<open.lowerBound]
            output += before
            line += before.count { $0 == "\n" }
            let afterOpen = rest[open.upperBound...]
            guard let close = afterOpen.range(of: "}}"),
                  !afterOpen[..<close.lowerBound].contains("\n") else {
                throw .configTemplate(file: file, line: line, reason: "'{{' without a closing '}}' on the same line")
            }
            let name = String(afterOpen[..<close.lowerBound])
            guard Self.isPlaceholderName(name) else {
                throw .configTemplate(file: file, line: line,
                                      reason: "'{{\(name)}}' is not a placeholder (names are upper case, digits and '_')")
            }
            guard let value = values[name] else {
                let known = values.keys.sorted().joined(separator: ", ")
                throw .configTemplate(file: file, line: line, reason: "unknown placeholder {{\(name)}} (known here: \(known))")
            }
            output += value
            rest = afterOpen[close.upperBound...]
        }
        output += rest
        return output
    }

    private static func isPlaceholderName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "_")
        }
    }
}
