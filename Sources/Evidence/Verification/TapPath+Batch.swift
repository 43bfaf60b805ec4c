extension TapPath {
    /// The same path — taps, order, source, hops — over other records of
    /// its taps: one batch of a streamed verification (`StreamingVerifier`),
    /// whose path was decided once from the start of the recordings.
    ///
    /// - Parameter records: per tap of `path`, in path order, the batch's records.
    init(_ path: TapPath, records: [[ExchangeRecord]]) {
        taps = zip(path.taps, records).map { tap, records in
            PathTap(name: tap.name, kind: tap.kind,
                    recording: Recording(path: tap.recording.path, header: tap.recording.header, records: records))
        }
        source = path.source
        hops = path.hops
        hopTaps = path.hopTaps
    }
}
