import ConfigurationFile
import Evidence
import Faults
import Foundation

/// The readers of files a user hands to Intact: recordings, the located JSON
/// parser under every configuration file, and the fault rule compiler. Any
/// input must end in a value or a thrown error with a message.
enum ConfigurationFuzzing {
    static func recording(_ bytes: [UInt8]) {
        do {
            let recording = try RecordingReader.read(Data(bytes), path: "fuzz.jsonl")
            for warning in recording.warnings { precondition(!warning.message.isEmpty, "an empty warning") }
        } catch {
            precondition(!"\(error)".isEmpty, "an error without a message")
        }
    }

    static func locatedJSON(_ bytes: [UInt8]) {
        do {
            _ = try LocatedJSONParser.parse(bytes)
        } catch {
            precondition(error.position.line >= 1 && error.position.column >= 1, "a syntax error outside the file")
        }
    }

    static func faultRules(_ bytes: [UInt8]) {
        do {
            let rules = try FaultRuleFile.parse(bytes, file: "fuzz.json")
            _ = FaultEngine(rules: rules, seed: 1)
        } catch {
            precondition(!"\(error)".isEmpty, "a rule error without a message")
        }
    }
}
