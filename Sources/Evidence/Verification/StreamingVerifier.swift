import Foundation

/// Where a streamed verification sends the exchanges as they are judged:
/// first the path, then batches of exchanges in the order judged (numbered
/// in that order). Called only when the run is streamed (`StreamingVerifier`).
public protocol VerificationSink: AnyObject {
    func begin(policy: PolicySummary, recordings: Int, path: VerifiedPath)
    func judged(_ exchanges: [VerifiedExchange], path: VerifiedPath)
}

/// Verifies recordings of any size in bounded memory, and while they are
/// being written (`Options.follow`).
///
/// Every recording is read once, as a stream (`RecordingStream`), all of
/// them together in time order (`RecordingMerge`). A run of at most
/// `Options.wholeRunLimit` records is verified whole by `Verifier`, exactly
/// as from `RecordingReader`'s recordings: the same report, byte for byte.
/// A larger run (or a followed one) is streamed: the path is decided from
/// its first records, each record is paired across the taps as it comes
/// (`ExchangeWindow`: by trace, else by fallback keys within the window),
/// complete exchanges are judged in batches (`Verifier.judge`, the same
/// judging), handed to the sink, counted (`VerificationTally`) and
/// forgotten. Memory is bounded by the window, the batch and the tally's
/// caps, not by the recordings.
///
/// Corrupt lines in the middle of a recording are skipped, named in the
/// warnings and counted: the problem `unreadable-lines` fails the policy.
public struct StreamingVerifier {
    public struct Options: Sendable {
        /// How far apart in time (seconds) records of one exchange may be and still pair.
        public var windowSeconds: Double = 10
        /// Runs of at most this many records are verified whole (`Verifier`):
        /// they are held until the end is seen, so this bounds the memory of
        /// the start of a streamed run too (about 7 KiB per record).
        public var wholeRunLimit = 5_000
        /// Exchanges judged together.
        public var batchSize = 1000
        /// Failing exchanges and first exchanges a streamed report keeps.
        public var failingCap = 1000
        public var sampleCount = 100
        /// Read on at the end of the files, as the taps write them, until `shouldStop` says so.
        public var follow = false
        /// While following, how often to look at the files again (seconds).
        public var pollInterval: Double = 0.2

        public init() {}
    }

    /// How far a verification has read.
    public struct Progress: Sendable {
        public var records: Int
        public var bytesRead: Int
        public var bytesTotal: Int
        public var exchanges: Int
        public var failing: Int
        public var pending: Int
    }

    public var configuration: Verifier.Configuration
    public var options: Options

    public init(_ configuration: Verifier.Configuration = Verifier.Configuration(), options: Options = Options()) {
        self.configuration = configuration
        self.options = options
    }

    /// Verifies the recordings at `paths`, one per tap. `progress` is called
    /// now and then while reading; `shouldStop` is asked while following
    /// (and between batches): true ends the run with the report so far.
    /// Throws `RecordingReadError` for a recording that cannot be opened or
    /// has no header, `VerificationInputError` for recordings that cannot be
    /// verified together.
    public func verify(paths: [String], sink: VerificationSink? = nil, progress: ((Progress) -> Void)? = nil,
                       shouldStop: () -> Bool = { false }) throws -> VerificationReport {
        guard !paths.isEmpty else { throw VerificationInputError.noRecordings }
        let streams = try paths.map { try RecordingStream(path: $0) }
        var merge = try RecordingMerge(streams.enumerated().map { ($0.element, $0.offset) })
        var run = Run(streams: streams, progress: progress)

        // The start of the run: all of it when small (verified whole), enough to order the taps otherwise.
        var prefix: [(record: ExchangeRecord, file: Int, time: Double, place: String)] = []
        var ended = false
        while options.follow ? prefix.count < min(options.wholeRunLimit, 1000) : prefix.count <= options.wholeRunLimit {
            guard let next = try merge.next() else {
                if !options.follow {
                    prefix += try merge.finish().map { ($0.record, $0.tap, $0.time, $0.place) }
                    ended = true
                }
                break
            }
            prefix.append((next.record, next.tap, next.time, next.place))
            run.read(1)
        }
        if ended && prefix.count <= options.wholeRunLimit && !options.follow {
            return try whole(prefix.map { ($0.record, $0.file) }, streams: streams)
        }

        // Streamed: the path from the start of the run.
        var perFile = [[ExchangeRecord]](repeating: [], count: streams.count)
        for entry in prefix { perFile[entry.file].append(entry.record) }
        let start = zip(streams, perFile).map { Recording(path: $0.path, header: $0.header, records: $1) }
        try Verifier.checkDigests(start)
        let path = try TapPath(start, order: configuration.path)
        let tapOfFile = streams.map { stream in path.taps.firstIndex { $0.name == stream.header.tap }! }
        let verifier = Verifier(configuration)
        var window = ExchangeWindow(entries: path.taps.map(\.entry), exits: path.taps.map(\.exit),
                                    window: options.windowSeconds * 1000)
        var batch = ExchangeBatch(taps: path.taps.count)
        var boundaries = BoundaryPairs(taps: path.taps.count)
        sink?.begin(policy: PolicySummary(configuration.policy), recordings: streams.count, path: path.verifiedPath)
        let judging = BatchJudge(verifier: verifier, path: path, sink: sink,
                                 tally: VerificationTally(hops: path.hops.count, failingCap: options.failingCap,
                                                          sampleCount: options.sampleCount))

        func judge() {
            guard !batch.chains.isEmpty else { return }
            judging.submit(batch)
            batch = ExchangeBatch(taps: path.taps.count)
        }
        func take(_ left: [[ExchangeRecord?]]) {
            for members in left { batch.add(members, path: path, boundaries: &boundaries) }
            if batch.chains.count >= options.batchSize { judge() }
        }
        for entry in prefix {
            take(window.add(entry.record, tap: tapOfFile[entry.file], time: entry.time, where: entry.place))
        }
        prefix = []
        var stopped = false
        while !stopped {
            while let next = try merge.next() {
                take(window.add(next.record, tap: tapOfFile[next.tap], time: next.time, where: next.place))
                run.read(1, window: window, judged: judging.counts)
                if run.records % 4096 == 0, shouldStop() {
                    stopped = true
                    break
                }
            }
            guard options.follow, !stopped else { break }
            // Nothing more for now: judge what is complete, let the window pass for what waits, look again.
            take(window.advance(to: Date().timeIntervalSince1970 * 1000 - 1000))
            judge()
            judging.wait()
            run.report(window: window, judged: judging.counts, force: true)
            if shouldStop() { break }
            if try !merge.poll() { Thread.sleep(forTimeInterval: options.pollInterval) }
            if shouldStop() { break }
        }
        if !options.follow || !stopped {
            for rest in try merge.finish() {
                take(window.add(rest.record, tap: tapOfFile[rest.tap], time: rest.time, where: rest.place))
            }
        }
        take(window.drain())
        judge()
        return report(path: path, streams: streams, tally: judging.finish(), window: window, unpaired: boundaries.unpaired)
    }

    /// A small run, verified whole: the recordings as `RecordingReader` reads them, then `Verifier`.
    private func whole(_ records: [(ExchangeRecord, Int)], streams: [RecordingStream]) throws -> VerificationReport {
        var perFile = [[ExchangeRecord]](repeating: [], count: streams.count)
        for (record, file) in records { perFile[file].append(record) }
        let recordings = zip(streams, perFile).map { stream, records in
            Recording(path: stream.path, header: stream.header, records: records, warnings: stream.warnings)
        }
        var report = try Verifier(configuration).verify(recordings)
        if let problem = unreadable(streams) {
            report.problems.append(problem)
            report.policyHolds = false
        }
        return report
    }

    /// The problem of lines that were no valid record, when there were any.
    private func unreadable(_ streams: [RecordingStream]) -> VerificationProblem? {
        let files = streams.filter { $0.unreadable > 0 }
        guard !files.isEmpty else { return nil }
        let total = files.reduce(0) { $0 + $1.unreadable }
        return VerificationProblem(kind: .unreadableLines, message:
            "\(total) line\(total == 1 ? "" : "s") of the recordings could not be read and were skipped ("
            + files.map { "\($0.path): \($0.unreadable)" }.joined(separator: ", ") + "; each is named in the warnings)")
    }

    private func report(path: TapPath, streams: [RecordingStream], tally: VerificationTally, window: ExchangeWindow,
                        unpaired: [Int]) -> VerificationReport {
        let intermediary = tally.intermediaryRequests
        let connections = tally.tapConnections(path)
        var problems = Verifier.problems(path: path, exchanges: tally.exchanges, intermediaryRequests: intermediary.total,
                                         appChains: tally.appChains, crossingChains: tally.crossingChains,
                                         unpairedBoundaries: unpaired)
        if let problem = unreadable(streams) { problems.append(problem) }
        let headers = streams.map { Recording(path: $0.path, header: $0.header, records: []) }
        var warnings = Verifier.digestKeyWarnings(headers) + streams.flatMap { $0.warnings.map(\.description) }
        if window.late > 0 {
            warnings += window.lateExamples
            if window.late > window.lateExamples.count {
                warnings.append("… and \(window.late - window.lateExamples.count) more records beyond the pairing window")
            }
        }
        if window.evictedEarly > 0 {
            warnings.append("\(window.evictedEarly) exchanges were judged before their window passed: more than "
                            + "\(window.maximumPending) were waiting for partners at once")
        }
        let summaries = streams.map { stream -> RecordingSummary in
            var summary = RecordingSummary(Recording(path: stream.path, header: stream.header, records: []))
            summary.exchanges = stream.records
            return summary
        }
        var report = VerificationReport(policy: PolicySummary(configuration.policy), recordings: summaries,
                                        path: path.verifiedPath, exchanges: tally.listed, intermediaryRequests: intermediary,
                                        connections: connections, problems: problems, warnings: warnings)
        var summary = tally.summary
        summary.intermediaryRequests = intermediary.total
        summary.connectionEvents = connections.reduce(0) { $0 + $1.total }
        report.summary = summary
        report.otherOrigins = tally.otherOrigins
        report.policyHolds = problems.isEmpty && tally.exchanges > 0 && tally.failingTotal == 0 && intermediary.forbidden == 0
        report.listing = ExchangeListing(exchanges: tally.exchanges, failingExchanges: tally.failingTotal,
                                         failingListed: tally.failing.count, failingOnInjectedHops: tally.failingOnInjected,
                                         sampled: tally.sample.count, lateRecords: window.late,
                                         windowSeconds: options.windowSeconds)
        return report
    }

    /// Counts and progress of one run.
    private struct Run {
        let streams: [RecordingStream]
        let progress: ((Progress) -> Void)?
        var records = 0
        private var lastReport = Date.distantPast

        init(streams: [RecordingStream], progress: ((Progress) -> Void)?) {
            self.streams = streams
            self.progress = progress
        }

        mutating func read(_ count: Int, window: ExchangeWindow? = nil, judged: BatchJudge.Counts? = nil) {
            records += count
            if records % 1024 == 0 { report(window: window, judged: judged, force: false) }
        }

        mutating func report(window: ExchangeWindow?, judged: BatchJudge.Counts?, force: Bool) {
            guard let progress else { return }
            let now = Date()
            guard force || now.timeIntervalSince(lastReport) >= 0.25 else { return }
            lastReport = now
            progress(Progress(records: records, bytesRead: streams.reduce(0) { $0 + $1.bytesRead },
                              bytesTotal: streams.reduce(0) { $0 + $1.size }, exchanges: judged?.exchanges ?? 0,
                              failing: judged?.failing ?? 0, pending: window?.pendingCount ?? 0))
        }
    }
}
