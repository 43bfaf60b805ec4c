import Foundation
import Glibc
import Hashing

/// The digest key of a setup: a file of exactly 32 random bytes, mode 0600,
/// by default `digest-key` beside the development CA, shared by every tap
/// (proxy, mock server, client) that should produce comparable secret
/// digests (`SecretDigester`).
///
/// A key file readable by group or others, of another length, or not a
/// regular file is refused with the reason: a key anyone on the machine can
/// read protects nothing, and a short one is not the key that was meant.
public enum DigestKeyFile {
    /// The file name beside the CA.
    public static let fileName = "digest-key"

    /// The default key path for a CA directory.
    public static func path(besideCA directory: String) -> String {
        (directory as NSString).appendingPathComponent(fileName)
    }

    /// Loads the key at `path`, creating it (32 random bytes, mode 0600, and
    /// its directory, mode 0700, if missing) when no file is there. Two taps starting together create it once: the key is
    /// written to a private temporary file and linked into place, and the one
    /// that loses the race reads the winner's. Blocks on disk I/O.
    ///
    /// - Returns: the digester and whether the file was created now.
    public static func loadOrCreate(at path: String) throws(DigestKeyError) -> (digester: SecretDigester, created: Bool) {
        if access(path, F_OK) == 0 || errno != ENOENT { return (try load(at: path), false) }
        // Like the CA, the directory is made on first use (private).
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw DigestKeyError(path: path, problem: .cannotCreate((error as NSError).localizedDescription))
            }
        }
        let key = SecureRandom.bytes(SecretDigester.keyByteCount)
        let temporary = path + ".tmp-\(getpid())"
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw DigestKeyError(path: path, problem: .cannotCreate(String(cString: strerror(errno)))) }
        let written = key.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        Glibc.close(fd)
        defer { unlink(temporary) }
        guard written == key.count, synced else {
            throw DigestKeyError(path: path, problem: .cannotCreate(String(cString: strerror(errno))))
        }
        if link(temporary, path) != 0 {
            guard errno == EEXIST else { throw DigestKeyError(path: path, problem: .cannotCreate(String(cString: strerror(errno)))) }
            return (try load(at: path), false)
        }
        return (SecretDigester(key: key), true)
    }

    /// Loads the key at `path`; it must exist. Blocks on disk I/O.
    public static func load(at path: String) throws(DigestKeyError) -> SecretDigester {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw DigestKeyError(path: path, problem: .cannotRead(String(cString: strerror(errno)))) }
        defer { Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw DigestKeyError(path: path, problem: .cannotRead(String(cString: strerror(errno)))) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw DigestKeyError(path: path, problem: .notARegularFile) }
        let mode = Int(info.st_mode & 0o777)
        guard mode & 0o077 == 0 else { throw DigestKeyError(path: path, problem: .readableByOthers(mode: mode)) }
        guard Int(info.st_size) == SecretDigester.keyByteCount else {
            throw DigestKeyError(path: path, problem: .wrongLength(Int(info.st_size)))
        }
        var key = [UInt8](repeating: 0, count: SecretDigester.keyByteCount)
        let read = key.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard read == SecretDigester.keyByteCount else {
            throw DigestKeyError(path: path, problem: .cannotRead(read < 0 ? String(cString: strerror(errno)) : "short read"))
        }
        return SecretDigester(key: key)
    }
}

/// Why a digest key file was refused, naming the file.
public struct DigestKeyError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Problem: Hashable, Sendable {
        case cannotRead(String)
        case cannotCreate(String)
        case notARegularFile
        /// Group or other permission bits are set.
        case readableByOthers(mode: Int)
        /// The file does not hold exactly 32 bytes.
        case wrongLength(Int)
    }

    public var path: String
    public var problem: Problem

    public init(path: String, problem: Problem) {
        self.path = path
        self.problem = problem
    }

    public var description: String {
        let reason: String
        switch problem {
        case .cannotRead(let why): reason = "cannot read it: \(why)"
        case .cannotCreate(let why): reason = "cannot create it: \(why)"
        case .notARegularFile: reason = "it is not a regular file"
        case .readableByOthers(let mode):
            reason = "its mode is \(String(mode, radix: 8)), so other users may read it; the key must be private "
                + "(chmod 600 \(path))"
        case .wrongLength(let count):
            reason = "it holds \(count) bytes; a digest key is exactly \(SecretDigester.keyByteCount) random bytes "
                + "(remove it to have a new one made, or give another with --digest-key)"
        }
        return "digest key \(path) refused: \(reason)"
    }
}
