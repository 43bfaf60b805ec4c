/// The fuzz targets: one entry function each, fed arbitrary bytes.
///
/// The same functions run under libFuzzer (`intact-fuzz`, built by `make fuzz`
/// with coverage and AddressSanitizer) and in `make test`, where
/// `FuzzCorpusTests` replays every file of `Tests/Fuzz/Corpus/<rawValue>/`
/// through them. An entry function returns normally for any input, valid or
/// not; it traps (a crash libFuzzer reports) only when the code under test
/// crashes or breaks an invariant its documentation states, which the entry
/// checks with `precondition`.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// `HTTP1Parser` in the request role, fed in pieces.
    case http1Request = "http1-request"
    /// `HTTP1Parser` in the response role, answering GET, HEAD and CONNECT requests.
    case http1Response = "http1-response"
    /// `HTTP2Session` as a server: the input follows the client preface.
    case http2Server = "http2-server"
    /// `HTTP2Session` as a client that sent two requests: the input is the server's bytes.
    case http2Client = "http2-client"
    /// `ClientHelloPeek.inspect`, whole and on every split.
    case clientHello = "client-hello"
    /// `RecordingReader.read` on a recording file's bytes.
    case recordingReader = "recording-reader"
    /// The located JSON parser behind every configuration file.
    case locatedJSON = "located-json"
    /// The fault rule compiler: `FaultRuleFile.parse`, then a `FaultEngine`.
    case faultRules = "fault-rules"

    /// Runs one input through the target.
    public func run(_ bytes: [UInt8]) {
        switch self {
        case .http1Request: HTTP1ParserFuzzing.request(bytes)
        case .http1Response: HTTP1ParserFuzzing.response(bytes)
        case .http2Server: HTTP2SessionFuzzing.server(bytes)
        case .http2Client: HTTP2SessionFuzzing.client(bytes)
        case .clientHello: ClientHelloFuzzing.peek(bytes)
        case .recordingReader: ConfigurationFuzzing.recording(bytes)
        case .locatedJSON: ConfigurationFuzzing.locatedJSON(bytes)
        case .faultRules: ConfigurationFuzzing.faultRules(bytes)
        }
    }
}
