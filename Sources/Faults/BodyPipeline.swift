/// The body stages of one message, in action order; each stage's output is
/// the next one's input.
struct BodyPipeline: Sendable {
    var stages: [BodyStage] = []
    let limit: Int

    /// True when some stage needs the whole body.
    var buffers: Bool { stages.contains { $0.buffers } }

    /// The body length after every stage, when known before the body is seen.
    func outputLength(input: Int?) -> Int? {
        stages.reduce(input) { length, stage in stage.outputLength(input: length) }
    }

    mutating func feed(_ chunk: [UInt8]) throws(FaultFailure) -> [[UInt8]] {
        var chunks = [chunk]
        for i in stages.indices {
            var next: [[UInt8]] = []
            for c in chunks { next += try stages[i].feed(c, limit: limit) }
            chunks = next
        }
        return chunks.filter { !$0.isEmpty }
    }

    /// Flushes every stage in order: a stage's tail goes through the stages after it.
    mutating func finish() throws(FaultFailure) -> (chunks: [[UInt8]], applied: [AppliedFault]) {
        var chunks: [[UInt8]] = []
        var applied: [AppliedFault] = []
        for i in stages.indices {
            var next: [[UInt8]] = []
            for c in chunks { next += try stages[i].feed(c, limit: limit) }
            let (tail, record) = stages[i].finish()
            next += tail
            if let record { applied.append(record) }
            chunks = next
        }
        return (chunks.filter { !$0.isEmpty }, applied)
    }
}
