import Compression

/// One body action as a stage of a body pipeline. Streaming stages (replace,
/// truncate, re-chunk) hold at most one chunk's worth; buffering stages
/// (regex, URL rewrite, gzip) hold the whole body up to a limit.
struct BodyStage: Sendable {
    enum Transform: Sendable {
        /// Drops the body and produces `body` at the end.
        case replace(body: [UInt8], dropped: Int)
        /// Passes the first `limit` bytes.
        case truncate(limit: Int, seen: Int)
        /// Cuts into chunks of `size`; `pending` is the start of the next chunk.
        case rechunk(size: Int, pending: [UInt8], chunks: Int)
        /// Holds the body, then transforms it whole.
        case buffer(WholeBody, held: [UInt8])
    }

    /// A transformation that needs the whole body.
    enum WholeBody: Sendable {
        case regex(CompiledRegex, template: String)
        case urls(URLRewrite)
        case gzip
    }

    let rule: String
    let action: FaultActionKind
    let leg: FaultLeg
    var transform: Transform

    /// True when the stage holds the whole body (the head must wait for it).
    var buffers: Bool {
        if case .buffer = transform { return true }
        return false
    }

    /// The output length for an input of `length` bytes, when a streaming stage can tell in advance.
    func outputLength(input length: Int?) -> Int? {
        switch transform {
        case .replace(let body, _): return body.count
        case .truncate(let limit, _): return length.map { min($0, limit) }
        case .rechunk: return length
        case .buffer: return nil
        }
    }

    /// Takes one chunk; returns what can go on now. Throws when a buffering
    /// stage would hold more than `limit` bytes.
    mutating func feed(_ chunk: [UInt8], limit: Int) throws(FaultFailure) -> [[UInt8]] {
        switch transform {
        case .replace(let body, let dropped):
            transform = .replace(body: body, dropped: dropped + chunk.count)
            return []
        case .truncate(let cut, let seen):
            transform = .truncate(limit: cut, seen: seen + chunk.count)
            guard seen < cut else { return [] }
            return [Array(chunk.prefix(cut - seen))]
        case .rechunk(let size, var pending, var chunks):
            var out: [[UInt8]] = []
            var rest = chunk[...]
            while pending.count + rest.count >= size {
                let take = size - pending.count
                out.append(pending + rest.prefix(take))
                rest = rest.dropFirst(take)
                pending = []
                chunks += 1
            }
            pending += rest
            transform = .rechunk(size: size, pending: pending, chunks: chunks)
            return out
        case .buffer(let whole, var held):
            guard held.count + chunk.count <= limit else {
                throw FaultFailure(rule: rule, action: action, leg: leg,
                                   reason: "the body is over the \(limit)-byte buffering limit of \(action)")
            }
            transform = .buffer(whole, held: []) // drop the reference so `held` stays unique
            held += chunk
            transform = .buffer(whole, held: held)
            return []
        }
    }

    /// The end of the body: the stage's last output and, when it changed
    /// something, the record of it.
    mutating func finish() -> (chunks: [[UInt8]], applied: AppliedFault?) {
        func record(_ change: String) -> AppliedFault {
            AppliedFault(rule: rule, action: action, leg: leg, change: change)
        }
        switch transform {
        case .replace(let body, let dropped):
            return ([body], record("body replaced: \(dropped) → \(body.count) bytes"))
        case .truncate(let limit, let seen):
            return ([], seen > limit ? record("body cut at \(limit) of \(seen) bytes") : nil)
        case .rechunk(let size, let pending, let chunks):
            let total = chunks + (pending.isEmpty ? 0 : 1)
            return ([pending], total == 0 ? nil : record("body re-cut into \(total) chunk\(total == 1 ? "" : "s") of \(size) bytes"))
        case .buffer(let whole, let held):
            transform = .buffer(whole, held: [])
            let (out, change) = BodyStage.transform(held, whole)
            return ([out], change.map(record))
        }
    }

    /// Applies a whole-body transformation; the change is nil when nothing changed.
    private static func transform(_ body: [UInt8], _ whole: WholeBody) -> ([UInt8], String?) {
        switch whole {
        case .gzip:
            let out = Compressor.compress(body, format: .gzip)
            return (out, "body gzip-compressed: \(body.count) → \(out.count) bytes")
        case .regex(let regex, let template):
            var text = BodyText(body)
            let (new, count) = regex.replacingMatches(in: text.text, with: template)
            guard count > 0, new != text.text else { return (body, nil) }
            text.text = new
            let out = text.bytes
            return (out, "\(count) match\(count == 1 ? "" : "es") of /\(regex.pattern)/ replaced: \(body.count) → \(out.count) bytes")
        case .urls(let rewrite):
            var text = BodyText(body)
            let (new, count) = rewrite.rewrite(text: text.text)
            guard count > 0 else { return (body, nil) }
            text.text = new
            let out = text.bytes
            return (out, "\(count) URL\(count == 1 ? "" : "s") in the body rewritten (\(rewrite)): \(body.count) → \(out.count) bytes")
        }
    }
}
