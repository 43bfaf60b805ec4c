import Glibc
import Synchronization

/// Where a context writes its TLS secrets in the NSS key log format
/// (the format Wireshark reads: `CLIENT_RANDOM …` for TLS 1.2,
/// `CLIENT_HANDSHAKE_TRAFFIC_SECRET …` and friends for TLS 1.3).
public enum TLSKeyLogSetting: Sendable, Hashable {
    /// Never write secrets.
    case disabled
    /// Write to the file named by the `SSLKEYLOGFILE` environment variable, if it is set and not empty.
    case environment
    /// Write to this file.
    case file(String)

    /// The path this setting names right now, or `nil` for none.
    var path: String? {
        switch self {
        case .disabled:
            return nil
        case .environment:
            guard let value = getenv("SSLKEYLOGFILE") else { return nil }
            let path = String(cString: value)
            return path.isEmpty ? nil : path
        case .file(let path):
            return path
        }
    }
}

/// An append-only NSS key log file, shared by every context that names the same path.
///
/// Invariants: one open descriptor per path for the life of the process
/// (files are few and are a debugging aid); each line is written whole, with its
/// newline, under the lock and with `O_APPEND`, so lines from concurrent
/// connections never interleave. Created with mode 0600: the file holds secrets.
final class TLSKeyLogFile: Sendable {
    let path: String
    private let descriptor: Int32
    private let writeLock = Mutex<Void>(())

    private static let openFiles = Mutex<[String: TLSKeyLogFile]>([:])

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    /// The shared writer for `path`, opening (and creating) the file on first use.
    static func shared(path: String) throws(TLSError) -> TLSKeyLogFile {
        let outcome: Result<TLSKeyLogFile, TLSError> = openFiles.withLock { files in
            if let file = files[path] { return .success(file) }
            let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                return .failure(TLSError(kind: .configuration,
                                         explanation: "cannot open key log file \(path): \(String(cString: strerror(errno)))"))
            }
            let file = TLSKeyLogFile(path: path, descriptor: descriptor)
            files[path] = file
            return .success(file)
        }
        return try outcome.get()
    }

    /// Appends one line (without its newline) as given by OpenSSL's key log callback.
    /// Write errors are dropped: a key log is a debugging aid and must not break a connection.
    func append(line: UnsafePointer<CChar>) {
        let length = strlen(line)
        var bytes = [UInt8](repeating: UInt8(ascii: "\n"), count: length + 1)
        bytes.withUnsafeMutableBytes { $0.baseAddress!.copyMemory(from: line, byteCount: length) }
        writeLock.withLock { _ in
            bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 && errno == EINTR { continue }
                    guard written > 0 else { return }
                    offset += written
                }
            }
        }
    }
}
