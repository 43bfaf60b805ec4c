/// Several clients on one path (two apps, or an app and a browser, each with
/// its own recording): each is a start of the path, so they are verified
/// together as one client end whose records keep the client they came from.
/// Their exchanges pair with the intermediaries' by trace as any do (each
/// client's trace ids are its own), and the report says which client each
/// exchange is (`VerifiedExchange.client`).
enum ClientRecordings {
    /// The separator of the merged client tap's name (`app+browser`).
    static let separator = "+"

    /// `recordings` with every client recording merged into one, records in
    /// order of their request's start (each record's `tap` and, prefixed
    /// `tap/`, its exchange id keep where it came from); unchanged with one
    /// client or none.
    static func merged(_ recordings: [Recording]) -> [Recording] {
        let clients = recordings.filter(isClient)
        guard clients.count > 1, let first = clients.first else { return recordings }
        let records = clients.flatMap { recording in
            recording.records.map { record -> ExchangeRecord in
                var record = record
                record.exchangeID = "\(recording.header.tap)/\(record.exchangeID)"
                return record
            }
        }.enumerated().sorted { a, b in
            switch (start(a.element), start(b.element)) {
            case let (x?, y?) where x != y: return x < y
            case (.some, nil): return true
            case (nil, .some): return false
            default: return a.offset < b.offset
            }
        }.map(\.element)
        var header = first.header
        header.tap = clients.map(\.header.tap).joined(separator: separator)
        let merged = Recording(path: clients.map(\.path).joined(separator: ", "), header: header, records: records,
                               warnings: clients.flatMap(\.warnings))
        var result = recordings.filter { !isClient($0) }
        result.insert(merged, at: 0)
        return result
    }

    /// `--path` with the merged clients' names replaced by the merged tap's (at the first of them).
    static func order(_ order: [String]?, for recordings: [Recording]) -> [String]? {
        let names = recordings.filter(isClient).map(\.header.tap)
        guard let order, names.count > 1 else { return order }
        let merged = names.joined(separator: separator)
        var result: [String] = []
        for name in order {
            if names.contains(name) || name == merged {
                if !result.contains(merged) { result.append(merged) }
            } else {
                result.append(name)
            }
        }
        return result
    }

    /// The client a record of a merged client tap came from; nil for a tap of one client.
    static func client(of record: ExchangeRecord, tap: String) -> String? {
        tap.contains(separator) ? record.tap : nil
    }

    private static func isClient(_ recording: Recording) -> Bool {
        let roles = Set(recording.records.flatMap { $0.legs.map(\.role) })
        return roles == [.client] || roles.isEmpty && TapMode(rawValue: recording.header.mode) == .client
    }

    private static func start(_ record: ExchangeRecord) -> Timestamp? {
        record.legs.compactMap { $0.request?.timings.earliest }.min()
    }
}
