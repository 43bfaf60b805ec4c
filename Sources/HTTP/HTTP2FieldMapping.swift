/// Maps the version-neutral heads to HTTP/2 header lists and back.
///
/// Sending (RFC 9113 §8.2–8.3):
/// - names are lowercased; pseudo-fields come first: `:method`, `:scheme`,
///   `:authority`, `:path` for requests (CONNECT: `:method` and `:authority`
///   only; an RFC 8441 extended CONNECT: `:method`, `:protocol`, `:scheme`,
///   `:authority`, `:path`), `:status` for responses;
/// - the pseudo-fields keep the head's `pseudoFieldOrder` (the order they
///   arrived in from an HTTP/2 client) when it names exactly the ones sent;
///   nghttp2 sends a list in the order given;
/// - `:scheme` is the head's scheme, `https` when it has none;
/// - `:authority` is the head's authority, else the value of its `Host` field;
///   `Host` itself is never sent (`:authority` carries it);
/// - connection-specific fields are dropped: `Connection` and every field it
///   names, the rest of `HopByHopFieldNames.fixed` (`Keep-Alive`,
///   `Transfer-Encoding`, …), and `TE` unless its value is `trailers`;
/// - a `Content-Length` list whose elements agree (`5, 5`) becomes one value
///   (`ContentLengthList`): HTTP/2 carries one;
/// - everything else (cookie crumbs included) keeps its order and value.
///
/// Receiving: nghttp2 has already validated the list (lowercase names, pseudo
/// fields first and once, no connection-specific fields); this only splits
/// it, and keeps the pseudo-fields' order on the head when it is not the
/// standard one (`HTTP2PseudoFieldOrder`).
public enum HTTP2FieldMapping {
    /// True when `field` never travels in HTTP/2 (any case): a hop-by-hop
    /// name (`HopByHopFieldNames.fixedName`, one length test and one
    /// comparison, no `Set`: Docs/performance.md#http2-header-lists) but
    /// `te`, which is handled apart, and `host`.
    private static func isConnectionSpecific(_ field: HTTPField) -> Bool {
        if let name = HopByHopFieldNames.fixedName(field.name) { return name != .te }
        return field.hasName(.host)
    }

    /// The header list for a request head.
    public static func requestList(_ head: HTTPRequestHead) -> [HTTPField] {
        var list: [HTTPField] = []
        list.reserveCapacity(5 + head.fields.count)
        list.append(HTTPField(name: ":method", value: head.method.rawValue))
        let authority = head.authority ?? head.fields[.host]
        if let connectProtocol = head.connectProtocol, head.method == .connect {
            // RFC 8441 §4: an extended CONNECT carries :protocol, :scheme and :path too.
            list.append(HTTPField(name: ":protocol", value: connectProtocol))
            list.append(HTTPField(name: ":scheme", value: head.scheme ?? "https"))
            list.append(HTTPField(name: ":authority", value: authority ?? ""))
            list.append(HTTPField(name: ":path", value: head.path.isEmpty ? "/" : head.path))
        } else if head.method == .connect {
            list.append(HTTPField(name: ":authority", value: authority ?? ""))
        } else {
            list.append(HTTPField(name: ":scheme", value: head.scheme ?? "https"))
            if let authority { list.append(HTTPField(name: ":authority", value: authority)) }
            list.append(HTTPField(name: ":path", value: head.path.isEmpty ? "/" : head.path))
        }
        head.pseudoFieldOrder?.arrange(&list, pseudoFieldCount: list.count)
        appendRegular(head.fields, to: &list)
        return list
    }

    /// The header list for a response head (interim or final).
    static func responseList(_ head: HTTPResponseHead) -> [HTTPField] {
        var list: [HTTPField] = []
        list.reserveCapacity(1 + head.fields.count)
        list.append(HTTPField(name: ":status", value: String(head.status.code)))
        appendRegular(head.fields, to: &list)
        return list
    }

    /// Regular fields (also used for trailers): lowercased, connection-specific ones dropped.
    static func regularList(_ fields: HTTPFields) -> [HTTPField] {
        var list: [HTTPField] = []
        list.reserveCapacity(fields.count)
        appendRegular(fields, to: &list)
        return list
    }

    /// Appends `regularList(fields)` to `list` (one array for a whole head).
    private static func appendRegular(_ fields: HTTPFields, to list: inout [HTTPField]) {
        // The names `Connection` lists beyond the fixed ones, which go anyway (none in the usual head).
        let named = HopByHopFieldNames.namesInConnection(fields)
        // One copy of each field, used for every check and for the field
        // that goes out (reading `fields[index]` per check copies it each time).
        for field in fields.collapsingContentLengthList {
            if isConnectionSpecific(field) { continue }
            if !named.isEmpty, named.contains(where: { field.hasName($0) }) { continue }
            if field.hasName(.te), HTTPField.lowercaseASCII(field.value.trimmingSpacesAndTabs()) != "trailers" {
                continue
            }
            list.append(HTTPField(name: field.lowercasedName, value: field.value))
        }
    }

    /// Builds a request head from a decoded list (server role).
    static func requestHead(from list: [HTTPField]) -> HTTPRequestHead {
        var method = "", path = "", scheme: String?, authority: String?, connectProtocol: String?
        var fields = HTTPFields()
        // nghttp2 has checked that pseudo-fields come first: the rest are regular.
        let pseudo = list.prefix { $0.name.utf8.first == UInt8(ascii: ":") }.count
        fields.reserveCapacity(list.count - pseudo)
        for field in list {
            // A regular name never starts with a colon: one byte rules out every pseudo-field.
            guard field.name.utf8.first == UInt8(ascii: ":") else {
                fields.append(field)
                continue
            }
            switch field.name {
            case ":method": method = field.value
            case ":scheme": scheme = field.value
            case ":authority": authority = field.value
            case ":path": path = field.value
            case ":protocol": connectProtocol = field.value
            default: fields.append(field)
            }
        }
        let form: RequestTargetForm
        if method == HTTPMethod.connect.rawValue && connectProtocol == nil {
            form = .authority
        } else {
            form = path == "*" ? .asterisk : .origin
        }
        var head = HTTPRequestHead(method: HTTPMethod(method), scheme: scheme, authority: authority, path: path,
                                   targetForm: form, version: .http2, fields: fields, connectProtocol: connectProtocol)
        if let order = HTTP2PseudoFieldOrder(requestList: list), !order.isStandard { head.pseudoFieldOrder = order }
        return head
    }

    /// Builds a response head from a decoded list (client role); nil when
    /// `:status` is not a number (nghttp2 has checked it is three digits).
    static func responseHead(from list: [HTTPField]) -> HTTPResponseHead? {
        var status: Int?
        var fields = HTTPFields()
        fields.reserveCapacity(max(list.count - 1, 0))
        for field in list {
            if field.name.utf8.first == UInt8(ascii: ":") && field.name == ":status" {
                status = Int(field.value)
            } else {
                fields.append(field)
            }
        }
        guard let status else { return nil }
        return HTTPResponseHead(status: HTTPStatus(status), reason: "", version: .http2, fields: fields)
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and horizontal tabs (OWS).
    func trimmingSpacesAndTabs() -> String {
        var scalars = Substring(self).unicodeScalars[...]
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}

extension HTTPRequestHead {
    /// This head as the HTTP/2 peer decodes it once `HTTP2Session.sendRequest`
    /// sent it: the decode of exactly the header list the mapping writes
    /// (`Host` carried as `:authority`, names lowercased, connection-specific
    /// fields gone, an empty path `/`). What a sender records of its HTTP/2 leg.
    public var asSentOverHTTP2: HTTPRequestHead {
        HTTP2FieldMapping.requestHead(from: HTTP2FieldMapping.requestList(self))
    }

    /// The head the HTTP/2 peer decodes from `list`, the field list
    /// `HTTP2FieldMapping.requestList` made of this head and the session sent.
    public static func decodedFromHTTP2(_ list: [HTTPField]) -> HTTPRequestHead {
        HTTP2FieldMapping.requestHead(from: list)
    }
}

extension HTTPResponseHead {
    /// This head as the HTTP/2 peer decodes it once `HTTP2Session.sendResponse`
    /// sent it (no reason phrase, names lowercased, connection-specific fields gone).
    public var asSentOverHTTP2: HTTPResponseHead {
        decodedFromHTTP2(HTTP2FieldMapping.responseList(self))
    }

    /// This head as the HTTP/2 peer decodes `list`, the field list
    /// `HTTP2FieldMapping.responseList` made of it and the session sent.
    public func decodedFromHTTP2(_ list: [HTTPField]) -> HTTPResponseHead {
        HTTP2FieldMapping.responseHead(from: list) ?? HTTPResponseHead(status: status, reason: "", version: .http2)
    }
}

extension HTTPFields {
    /// Trailers as the HTTP/2 peer decodes them once sent (names lowercased,
    /// connection-specific fields gone); nil when none remain, as then only
    /// END_STREAM goes out.
    public var asSentOverHTTP2: HTTPFields? {
        let list = HTTP2FieldMapping.regularList(self)
        return list.isEmpty ? nil : HTTPFields(list)
    }
}
