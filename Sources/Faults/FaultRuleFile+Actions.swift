import ConfigurationFile
import HTTP

extension FaultRuleFile {
    /// The fields each action takes besides `action`.
    static func fields(of kind: FaultActionKind) -> [String] {
        switch kind {
        case .removeHeader: return ["name"]
        case .addHeader, .setHeader: return ["name", "value"]
        case .renameHeader: return ["name", "to"]
        case .headerCase: return ["name", "style"]
        case .removeSetCookie: return ["cookie"]
        case .rewriteSetCookie: return ["cookie", "value"] + cookieAttributes.map(\.key)
        case .foldSetCookie, .gzipBody, .close, .stall, .unknownCACertificate: return []
        case .addSetCookie: return ["value"]
        case .removeCookie: return ["cookie"]
        case .rewriteCookie: return ["cookie", "value"]
        case .replaceBody: return ["body", "contentType"]
        case .regexBody, .regexTarget: return ["pattern", "template"]
        case .truncateBody, .rechunkBody: return ["bytes"]
        case .setStatus: return ["status", "reason", "location"]
        case .answer: return ["status", "reason", "headers", "body"]
        case .rewriteURLs: return ["scheme", "host", "pathFrom", "pathTo", "onlyHost", "in"]
        case .gate: return ["cookie", "header", "status", "location"]
        case .delay: return ["ms", "jitter"]
        case .throttle: return ["bytesPerSecond"]
        case .reset: return ["at", "bytes"]
        case .requireClientCertificate: return ["caFile"]
        }
    }

    /// Rule-file keys of `rewrite-set-cookie` and the attribute each edits.
    private static let cookieAttributes: [(key: String, attribute: String)] = [
        ("path", "Path"), ("domain", "Domain"), ("secure", "Secure"), ("httpOnly", "HttpOnly"),
        ("sameSite", "SameSite"), ("maxAge", "Max-Age"), ("expires", "Expires"),
    ]

    /// Decodes one action of a rule on `leg` (nil for a connection rule).
    static func decodeAction(_ json: LocatedJSON, path: String, rule: RuleReference, leg: FaultLeg?) throws(FaultRuleError) -> FaultAction {
        // Read `action` first so the allowed fields can be those of this action.
        let probe = try JSONFieldReader(json, path: path, rule: rule, allowed: nil)
        let kind = try probe.required("action") { (key: String) throws(FaultRuleError) in try probe.choice(key, FaultActionKind.self) }
        let a = try JSONFieldReader(json, path: path, rule: rule, allowed: ["action"] + fields(of: kind))
        switch kind {
        case .removeHeader:
            return .removeHeader(name: try a.required("name", a.name))
        case .addHeader:
            return .addHeader(name: try a.required("name", a.name), value: try a.required("value", a.string))
        case .setHeader:
            return .setHeader(name: try a.required("name", a.name), value: try a.required("value", a.string))
        case .renameHeader:
            return .renameHeader(name: try a.required("name", a.name), to: try a.required("to", a.name))
        case .headerCase:
            return .headerCase(name: try a.name("name"), style: try a.required("style") { (k: String) throws(FaultRuleError) in try a.choice(k, HeaderCaseStyle.self) })
        case .removeSetCookie:
            return .removeSetCookie(cookie: try a.name("cookie"))
        case .rewriteSetCookie:
            var edit = SetCookieEdit(value: try a.string("value"))
            for (key, attribute) in cookieAttributes {
                if let change = try a.attribute(key) { edit.attributes.append((attribute, change)) }
            }
            guard edit.value != nil || !edit.attributes.isEmpty else {
                throw a.error(.inconsistent("rewrite-set-cookie needs \"value\" or an attribute to change"))
            }
            return .rewriteSetCookie(cookie: try a.name("cookie"), edit: edit)
        case .foldSetCookie:
            return .foldSetCookie
        case .addSetCookie:
            return .addSetCookie(value: try a.required("value", a.name))
        case .removeCookie:
            return .removeCookie(cookie: try a.required("cookie", a.name))
        case .rewriteCookie:
            return .rewriteCookie(cookie: try a.required("cookie", a.name), value: try a.required("value", a.string))
        case .replaceBody:
            return .replaceBody(body: Array(try a.required("body", a.string).utf8), contentType: try a.name("contentType"))
        case .regexBody:
            let template = try a.required("template", a.string)
            if let unknown = TemplateVariables.unknownVariable(in: template) {
                throw a.error(.inconsistent(TemplateVariables.unknownMessage(unknown, in: "template")))
            }
            return .regexBody(try a.required("pattern", a.regex), template: template)
        case .regexTarget:
            return .regexTarget(try a.required("pattern", a.regex), template: try a.required("template", a.string))
        case .truncateBody:
            return .truncateBody(bytes: try a.required("bytes") { (k: String) throws(FaultRuleError) in try a.int(k, in: 0...Int.max) })
        case .rechunkBody:
            return .rechunkBody(bytes: try a.required("bytes") { (k: String) throws(FaultRuleError) in try a.int(k, in: 1...Int.max) })
        case .gzipBody:
            return .gzipBody
        case .setStatus:
            let location = try a.name("location")
            if let location, let unknown = TemplateVariables.unknownVariable(in: location) {
                throw a.error(.inconsistent(TemplateVariables.unknownMessage(unknown, in: "location")))
            }
            return .setStatus(status: try a.required("status") { (k: String) throws(FaultRuleError) in try a.int(k, in: 100...599) },
                              reason: try a.string("reason"), location: location)
        case .answer:
            return .answer(try decodeCannedResponse(a))
        case .rewriteURLs:
            return try decodeURLRewrite(a, leg: leg)
        case .gate:
            return .gate(try decodeGate(a))
        case .delay:
            return .delay(milliseconds: try a.required("ms") { (k: String) throws(FaultRuleError) in try a.int(k, in: 0...3_600_000) },
                          jitter: try a.int("jitter", in: 0...3_600_000) ?? 0)
        case .throttle:
            return .throttle(bytesPerSecond: try a.required("bytesPerSecond") { (k: String) throws(FaultRuleError) in try a.int(k, in: 1...Int.max) })
        case .reset:
            let at = try a.required("at") { (k: String) throws(FaultRuleError) in try a.choice(k, ResetPoint.Name.self) }
            let bytes = try a.int("bytes", in: 0...Int.max)
            switch (at, bytes) {
            case (.afterBodyBytes, let n?): return .reset(.afterBodyBytes(n))
            case (.afterBodyBytes, nil): throw a.error(.missingField("bytes"))
            case (_, .some): throw a.error(.inconsistent("\"bytes\" only goes with \"at\": \"after-body-bytes\""), "bytes")
            case (.beforeHeaders, nil): return .reset(.beforeHeaders)
            case (.afterHeaders, nil): return .reset(.afterHeaders)
            }
        case .close:
            return .closeSilently
        case .stall:
            return .stall
        case .requireClientCertificate:
            return .requireClientCertificate(caFile: try a.name("caFile"))
        case .unknownCACertificate:
            return .presentUnknownCA
        }
    }

    private static func decodeCannedResponse(_ a: JSONFieldReader) throws(FaultRuleError) -> CannedResponse {
        var fields = HTTPFields()
        if let headers = a.value("headers") {
            guard case .array(let pairs) = headers.value else {
                throw a.error(.wrongType(expected: "an array of [name, value] pairs", found: headers.typeName), "headers")
            }
            for (i, pair) in pairs.enumerated() {
                guard case .array(let items) = pair.value, items.count == 2,
                      case .string(let name) = items[0].value, case .string(let value) = items[1].value, !name.isEmpty else {
                    throw FaultRuleError(kind: .wrongType(expected: "a [name, value] pair of strings", found: pair.typeName),
                                         position: pair.position, context: a.context, path: "\(a.path("headers"))[\(i)]")
                }
                fields.append(name, value)
            }
        }
        return CannedResponse(status: try a.required("status") { (k: String) throws(FaultRuleError) in try a.int(k, in: 200...599) },
                              reason: try a.string("reason"), fields: fields, body: Array((try a.string("body") ?? "").utf8))
    }

    /// Without `in`, every place the rule's leg has.
    private static func decodeURLRewrite(_ a: JSONFieldReader, leg: FaultLeg?) throws(FaultRuleError) -> FaultAction {
        let scheme = try a.choice("scheme", URLRewrite.Scheme.self)?.rawValue
        let host = try a.name("host")
        if let host, host.contains("/") || host.contains("@") {
            throw a.error(.inconsistent("\"host\" is a host name with an optional port, not a URL"), "host")
        }
        let pathFrom = try a.string("pathFrom"), pathTo = try a.string("pathTo")
        if (pathFrom == nil) != (pathTo == nil) {
            throw a.error(.missingField(pathFrom == nil ? "pathFrom" : "pathTo"))
        }
        for (key, value) in [("pathFrom", pathFrom), ("pathTo", pathTo)] where value.map({ !$0.hasPrefix("/") }) ?? false {
            throw a.error(.inconsistent("\"\(key)\" must start with \"/\""), key)
        }
        guard scheme != nil || host != nil || pathFrom != nil else {
            throw a.error(.inconsistent("rewrite-urls needs \"scheme\", \"host\" or \"pathFrom\"/\"pathTo\""))
        }
        let places = try a.choices("in", URLPlace.self).map(Set.init)
            ?? Set(URLPlace.allCases.filter { place in leg.map { place.legs.contains($0) } ?? true })
        guard !places.isEmpty else { throw a.error(.outOfRange("an empty list", allowed: "at least one place"), "in") }
        return .rewriteURLs(URLRewrite(scheme: scheme, host: host, pathFrom: pathFrom, pathTo: pathTo, onlyHost: try a.name("onlyHost")),
                            places: places)
    }

    private static func decodeGate(_ a: JSONFieldReader) throws(FaultRuleError) -> Gate {
        let requirement: Gate.Requirement
        switch (try a.name("cookie"), try a.name("header")) {
        case (let cookie?, nil): requirement = .cookie(cookie)
        case (nil, let header?): requirement = .header(header)
        case (.some, .some): throw a.error(.inconsistent("a gate requires either \"cookie\" or \"header\", not both"), "header")
        case (nil, nil): throw a.error(.missingField("cookie"))
        }
        let status = try a.int("status", in: 100...599) ?? 302
        switch status {
        case 302:
            return Gate(requirement: requirement, denial: .redirect(location: try a.required("location", a.name)))
        case 401, 403:
            if a.has("location") { throw a.error(.inconsistent("\"location\" only goes with status 302"), "location") }
            return Gate(requirement: requirement, denial: .status(status))
        default:
            throw a.error(.outOfRange("\(status)", allowed: "302, 401 or 403"), "status")
        }
    }
}
