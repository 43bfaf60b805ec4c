import HTTP

/// Bytes of a script line, as the wire carries them.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Bytes read back as text, for comparing with a script line.
func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// A layer's idle step as a script line: `wait`, `pause` or `resume`.
func line(_ reading: HTTP1Reading) -> String {
    switch reading {
    case .unchanged: return "wait"
    case .pause: return "pause"
    case .resume: return "resume"
    }
}
