/// Reads the recordings of several taps as one stream in time order: a
/// k-way merge of their files, each read once, front to back
/// (`RecordingStream`), the record with the earliest time among the files'
/// next records first. A file's own order is never changed.
///
/// A record's time is the latest instant it holds (`time(of:)`): a tap
/// writes a record when its exchange ends, so each file is in that order
/// up to the writer's batching, and one exchange's records at different
/// taps lie close together — a long download's records are met at its end
/// at every tap. A record with no time at all takes the time of the one
/// before it in its file.
///
/// One owner; blocks on disk I/O.
struct RecordingMerge {
    /// One file, with the record read ahead and its time.
    private struct Source {
        let stream: RecordingStream
        let tap: Int
        var next: ExchangeRecord?
        var time: Double
        var line: Int
        var finished = false
    }

    private var sources: [Source]

    /// - Parameter streams: each with the index of its tap in the path.
    init(_ streams: [(stream: RecordingStream, tap: Int)]) throws {
        sources = streams.map { Source(stream: $0.stream, tap: $0.tap, next: nil, time: -.infinity, line: 0) }
        for index in sources.indices { try advance(index) }
    }

    /// The next record of all the files, with its tap, time and `path:line`; nil when every file is read to its end.
    mutating func next() throws -> (record: ExchangeRecord, tap: Int, time: Double, place: String)? {
        var best: Int?
        for index in sources.indices where sources[index].next != nil {
            if best == nil || sources[index].time < sources[best!].time { best = index }
        }
        guard let best, let record = sources[best].next else { return nil }
        let taken = (record, sources[best].tap, sources[best].time, "\(sources[best].stream.path):\(sources[best].line)")
        try advance(best)
        return taken
    }

    /// Looks at every file again (while following): true when any has more to read.
    mutating func poll() throws -> Bool {
        var more = false
        for index in sources.indices where sources[index].next == nil {
            if try sources[index].stream.poll() {
                try advance(index)
                more = more || sources[index].next != nil
            }
        }
        return more
    }

    /// Reads the unterminated rest of every file as its last line (the end of a run).
    mutating func finish() throws -> [(record: ExchangeRecord, tap: Int, time: Double, place: String)] {
        var rest: [(record: ExchangeRecord, tap: Int, time: Double, place: String)] = []
        for index in sources.indices where !sources[index].finished {
            sources[index].finished = true
            if let record = try sources[index].stream.finish() {
                let time = RecordingMerge.time(of: record) ?? sources[index].time
                rest.append((record, sources[index].tap, time, "\(sources[index].stream.path):\(sources[index].stream.lineNumber)"))
            }
        }
        return rest
    }

    private mutating func advance(_ index: Int) throws {
        let record = try sources[index].stream.next()
        sources[index].next = record
        if let record {
            sources[index].line = sources[index].stream.lineNumber
            if let time = RecordingMerge.time(of: record) { sources[index].time = time }
        }
    }

    /// The latest instant a record holds (milliseconds since the epoch): the
    /// latest timing of any message on any leg, else when its connection
    /// event happened; nil when it holds none.
    static func time(of record: ExchangeRecord) -> Double? {
        var latest: Double?
        func see(_ timestamp: Timestamp?) {
            guard let value = timestamp?.millisecondsSince1970, value.isFinite else { return }
            latest = max(latest ?? value, value)
        }
        for leg in record.legs {
            for message in [leg.request, leg.response] {
                guard let timings = message?.timings else { continue }
                see(timings.start)
                see(timings.headersDone)
                see(timings.end)
            }
        }
        if latest == nil { see(record.connection?.at) }
        return latest
    }
}
