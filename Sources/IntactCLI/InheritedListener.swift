import Wire

/// `--listen-fd N`, which `intact proxy` and `intact server` share: serve on
/// a listening socket the parent process reserved and handed down at
/// descriptor N (the scenario runner does this, so it never releases a port
/// it reserved), instead of binding `--listen`.
enum InheritedListener {
    /// The option, declared once for both commands.
    static func option() -> Option<Int?> {
        Option.optional("listen-fd", .integer(in: 0...Int(Int32.max), "N"),
                        help: "serve on the listening socket inherited at descriptor N instead of binding --listen")
    }

    /// The inherited socket when `--listen-fd` is given, nil when not.
    /// Throws a usage error when `--listen` is given too, and a failure
    /// naming what the descriptor is when it is not a listening TCP socket.
    static func socket<Address>(_ arguments: ParsedArguments, descriptor option: Option<Int?>,
                                address listen: Option<Address>) throws -> ListeningSocket? {
        guard let descriptor = arguments[option] else { return nil }
        guard !arguments.isGiven(listen) else {
            throw UsageError("give either --\(listen.long) or --\(option.long), not both", path: arguments.path)
        }
        do {
            return try ListeningSocket(inheriting: Int32(descriptor))
        } catch {
            throw CommandFailure("--\(option.long) \(descriptor): \(error)")
        }
    }
}
