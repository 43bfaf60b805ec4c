import HTTP

/// The outcome of one action on a head.
enum HeadEdit: Equatable {
    /// The action is not a head action of this kind of head.
    case notApplicable
    /// The action applies but found nothing to change.
    case unchanged
    /// The head changed; the text says how, for `AppliedFault.change`.
    case changed(String)
}

/// A message head the engine can edit: requests and responses.
protocol FaultableHead: Sendable, Hashable {
    var fields: HTTPFields { get set }
    var version: HTTPVersion { get }
    /// Applies a head action that needs more than the fields (target, status).
    mutating func applyHeadAction(_ action: FaultAction) -> HeadEdit
}

extension HTTPRequestHead: FaultableHead {
    mutating func applyHeadAction(_ action: FaultAction) -> HeadEdit {
        switch action {
        case .regexTarget(let regex, let template):
            let (newPath, count) = regex.replacingMatches(in: path, with: template)
            guard count > 0, newPath != path else { return .unchanged }
            let old = path
            path = newPath
            return .changed("target \(old) → \(newPath)")
        case .rewriteURLs(let rewrite, let places) where places.contains(.target):
            let host = authority ?? fields["Host"] ?? ""
            guard let new = rewrite.rewrite(scheme: scheme ?? "https", authority: host, path: path) else { return .unchanged }
            let old = "\(scheme ?? "https")://\(host)\(path)"
            // Origin form carries no scheme (taken as https here): set one only when it changes.
            if scheme != nil || new.scheme != "https" { scheme = new.scheme }
            if authority != nil { authority = new.authority }
            if fields.contains("Host") { fields.set("Host", new.authority) }
            path = new.path
            return .changed("target \(old) → \(new.scheme)://\(new.authority)\(new.path)")
        default:
            return fields.apply(action)
        }
    }
}

extension HTTPResponseHead: FaultableHead {
    mutating func applyHeadAction(_ action: FaultAction) -> HeadEdit {
        switch action {
        case .setStatus(let newStatus, let newReason, let location):
            let old = status
            status = HTTPStatus(newStatus)
            reason = version == .http2 ? "" : (newReason ?? HTTPResponseHead.standardReason(HTTPStatus(newStatus)))
            var change = "status \(old) → \(newStatus)"
            if let location {
                fields.set("Location", location)
                change += ", Location: \(location)"
            }
            return .changed(change)
        case .rewriteURLs(let rewrite, let places) where places.contains(.location):
            guard let old = fields["Location"], let new = rewrite.rewrite(url: old) else { return .unchanged }
            fields.set("Location", new)
            return .changed("Location \(old) → \(new)")
        default:
            return fields.apply(action)
        }
    }
}

extension HTTPFields {
    /// Applies a field action; `.notApplicable` for actions that are not about fields.
    mutating func apply(_ action: FaultAction) -> HeadEdit {
        switch action {
        case .removeHeader(let name):
            let n = remove(HTTPField.Name(name))
            return n == 0 ? .unchanged : .changed("removed \(n) \(name) field\(n == 1 ? "" : "s")")
        case .addHeader(let name, let value):
            append(name, value)
            return .changed("added \(name)")
        case .setHeader(let name, let value):
            let old = values(name)
            set(HTTPField.Name(name), value)
            return old == [value] ? .unchanged : .changed(old.isEmpty ? "added \(name)" : "set \(name)")
        case .renameHeader(let name, let to):
            let renamed = HTTPField.Name(name)
            var n = 0
            mapInPlace { field in
                if field.hasName(renamed) { field.name = to; n += 1 }
            }
            return n == 0 ? .unchanged : .changed("renamed \(n) \(name) field\(n == 1 ? "" : "s") to \(to)")
        case .headerCase(let name, let style):
            var n = 0
            mapInPlace { field in
                guard name.map({ field.hasName(HTTPField.Name($0)) }) ?? true else { return }
                let new = style.apply(field.name)
                if new != field.name { field.name = new; n += 1 }
            }
            return n == 0 ? .unchanged : .changed("\(n) field name\(n == 1 ? "" : "s") in \(style) case")
        case .removeSetCookie(let cookie):
            var removed: [String] = []
            removeAll { field in
                guard field.hasName(.setCookie) else { return false }
                let name = SetCookieValue.cookieName(field.value)
                guard cookie == nil || cookie == name else { return false }
                removed.append(name)
                return true
            }
            return removed.isEmpty ? .unchanged
                : .changed("removed \(removed.count) Set-Cookie field\(removed.count == 1 ? "" : "s") (\(removed.joined(separator: ", ")))")
        case .rewriteSetCookie(let cookie, let edit):
            var names: [String] = []
            mapInPlace { field in
                guard field.hasName(.setCookie) else { return }
                let name = SetCookieValue.cookieName(field.value)
                guard cookie == nil || cookie == name else { return }
                let new = edit.apply(to: field.value)
                if new != field.value { field.value = new; names.append(name) }
            }
            return names.isEmpty ? .unchanged : .changed("Set-Cookie \(names.joined(separator: ", ")): \(edit.summary)")
        case .foldSetCookie:
            let all = values("Set-Cookie")
            guard all.count > 1, let first = firstIndex(where: { $0.hasName(.setCookie) }) else { return .unchanged }
            let name = self[first].name
            var folded = HTTPFields()
            for (i, field) in enumerated() {
                if i == first { folded.append(name, all.joined(separator: ", ")) } else if !field.hasName(.setCookie) { folded.append(field) }
            }
            self = folded
            return .changed("folded \(all.count) Set-Cookie fields into one")
        case .addSetCookie(let value):
            append("Set-Cookie", value)
            return .changed("added Set-Cookie \(SetCookieValue.cookieName(value))")
        case .removeCookie(let cookie):
            let changed = editCrumbs { $0.crumbs.removeAll { $0.name == cookie } }
            return changed ? .changed("removed cookie \(cookie) from Cookie") : .unchanged
        case .rewriteCookie(let cookie, let value):
            let changed = editCrumbs { crumbs in
                for i in crumbs.crumbs.indices where crumbs.crumbs[i].name == cookie {
                    crumbs.crumbs[i].text = "\(cookie)=\(value)"
                }
            }
            return changed ? .changed("changed cookie \(cookie) in Cookie") : .unchanged
        default:
            return .notApplicable
        }
    }

    /// Edits the crumbs of every `Cookie` field (HTTP/2 may split them over
    /// several); a field left empty is removed, an untouched one keeps its bytes.
    /// Returns whether anything changed.
    private mutating func editCrumbs(_ edit: (inout CookieCrumbs) -> Void) -> Bool {
        var changed = false
        var result = HTTPFields()
        for field in self {
            guard field.hasName(.cookie) else { result.append(field); continue }
            var crumbs = CookieCrumbs(field.value)
            let before = crumbs.rendered
            edit(&crumbs)
            guard crumbs.rendered != before else { result.append(field); continue }
            changed = true
            if !crumbs.crumbs.isEmpty { result.append(field.name, crumbs.rendered) }
        }
        if changed { self = result }
        return changed
    }

    /// Makes the framing fields agree with a body of `length` bytes (nil: not
    /// known in advance). With `Transfer-Encoding` the codec frames the body
    /// and nothing changes; otherwise `Content-Length` is set to a known
    /// length, or removed so the codec frames the body (chunked on HTTP/1.1,
    /// DATA frames on HTTP/2).
    mutating func frame(bodyLength length: Int?) {
        guard !contains("Transfer-Encoding") else { return }
        if let length {
            if self["Content-Length"] != String(length) { set("Content-Length", String(length)) }
        } else {
            remove("Content-Length")
        }
    }

    /// The declared `Content-Length`, when there is exactly one valid value.
    var contentLength: Int? {
        let all = values("Content-Length")
        guard all.count == 1, let n = Int(all[0].trimmingSpaces), n >= 0 else { return nil }
        return n
    }
}
