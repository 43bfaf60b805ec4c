/// Why a sign-in run failed: the failure mode, the document sentence it
/// breaks (quoted verbatim), what to check, and what the client saw.
public struct Diagnosis: Hashable, Sendable, Codable {
    public var mode: FailureMode
    /// The exchange where the failure showed.
    public var step: FlowStep
    public var sentence: DocumentSentence
    /// `sentence.text`, stored so `--json` output carries the quotation.
    public var quote: String
    /// One line: what the user should check.
    public var advice: String
    /// What the client observed (`"401 with Content-Type text/html; no contextUrl"`).
    public var evidence: String

    /// A diagnosis quoting `sentence`, or the mode's own sentence when nil,
    /// advising `advice`, or the mode's own advice when nil.
    public init(mode: FailureMode, step: FlowStep, evidence: String, sentence: DocumentSentence? = nil,
                advice: String? = nil) {
        self.mode = mode
        self.step = step
        self.sentence = sentence ?? mode.sentence
        self.quote = self.sentence.text
        self.advice = advice ?? mode.advice
        self.evidence = evidence
    }
}
