import Glibc

/// File-system operations for certificates and keys, with the permission
/// rules Intact enforces: private keys 0600, CA directories 0700, and never
/// an overwritten file.
///
/// Every function blocks on disk I/O: never call one on a loop queue.
/// Errors name the path exactly as the caller gave it, so messages match
/// what the user typed (`certs/ca-key.pem`).
enum CertificateFiles {
    /// `directory` and `name` joined with one slash ("certs/" + "ca-key.pem" → "certs/ca-key.pem").
    static func path(_ directory: String, _ name: String) -> String {
        var directory = directory
        while directory.count > 1 && directory.hasSuffix("/") { directory.removeLast() }
        return directory == "/" ? "/" + name : directory + "/" + name
    }

    /// Whether anything exists at `path` (following symbolic links).
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// Reads a whole file.
    static func read(_ path: String) throws -> [UInt8] {
        try read(path, requiringPrivateMode: false)
    }

    /// Reads a whole file that must not be accessible by group or others
    /// (a private key). The mode is checked on the opened descriptor, so the
    /// file checked is the file read.
    static func readPrivate(_ path: String) throws -> [UInt8] {
        try read(path, requiringPrivateMode: true)
    }

    private static func read(_ path: String, requiringPrivateMode: Bool) throws -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw CertificateError.unreadable(file: path, reason: errnoText()) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw CertificateError.unreadable(file: path, reason: errnoText()) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw CertificateError.unreadable(file: path, reason: "not a regular file")
        }
        if requiringPrivateMode && info.st_mode & 0o077 != 0 {
            throw CertificateError.insecurePermissions(path: path, mode: info.st_mode & 0o7777, fixMode: 0o600)
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw CertificateError.unreadable(file: path, reason: errnoText())
            }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// Throws unless `path` is a directory that group and others cannot access.
    static func checkPrivateDirectory(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else { throw CertificateError.unreadable(file: path, reason: errnoText()) }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw CertificateError.notADirectory(path: path) }
        if info.st_mode & 0o077 != 0 {
            throw CertificateError.insecurePermissions(path: path, mode: info.st_mode & 0o7777, fixMode: 0o700)
        }
    }

    /// Makes `path` a directory with mode 0700: creates it (and any missing
    /// parents, with the usual 0755) or, when it already exists, tightens
    /// its mode to 0700. Creating it with that mode means there is no
    /// moment when another user could open it.
    static func makePrivateDirectory(_ path: String) throws {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else { throw CertificateError.notADirectory(path: path) }
            if info.st_mode & 0o777 != 0o700 && chmod(path, 0o700) != 0 {
                throw CertificateError.unwritable(file: path, reason: errnoText())
            }
            return
        }
        let parent = parentDirectory(of: path)
        if let parent, !exists(parent) {
            try makeDirectories(parent)
        }
        guard mkdir(path, 0o700) == 0 else { throw CertificateError.unwritable(file: path, reason: errnoText()) }
        // mkdir applies the umask, which can only remove bits; chmod makes the mode exact.
        guard chmod(path, 0o700) == 0 else { throw CertificateError.unwritable(file: path, reason: errnoText()) }
    }

    /// Writes a new file with exactly `mode`; refuses to replace an existing one.
    /// On a failed write the partial file is removed.
    static func writeNew(_ path: String, _ bytes: [UInt8], mode: mode_t) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            if errno == EEXIST { throw CertificateError.alreadyExists(file: path) }
            throw CertificateError.unwritable(file: path, reason: errnoText())
        }
        var failure: CertificateError?
        if fchmod(descriptor, mode) != 0 {
            failure = .unwritable(file: path, reason: errnoText())
        }
        var offset = 0
        while failure == nil && offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                failure = .unwritable(file: path, reason: errnoText())
            } else {
                offset += written
            }
        }
        if failure == nil && fsync(descriptor) != 0 {
            failure = .unwritable(file: path, reason: errnoText())
        }
        if close(descriptor) != 0 && failure == nil {
            failure = .unwritable(file: path, reason: errnoText())
        }
        if let failure {
            unlink(path)
            throw failure
        }
    }

    /// Removes a file, ignoring a missing one (used to undo a half-written CA).
    static func remove(_ path: String) {
        unlink(path)
    }

    /// Makes `path` and its missing parents with mode 0700 (the XDG rule for data directories).
    static func makeDirectories(_ path: String) throws {
        if let parent = parentDirectory(of: path), !exists(parent) {
            try makeDirectories(parent)
        }
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
            throw CertificateError.unwritable(file: path, reason: errnoText())
        }
    }

    static func parentDirectory(of path: String) -> String? {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return nil }
        let parent = trimmed[..<slash]
        return parent.isEmpty ? "/" : String(parent)
    }

    static func errnoText() -> String {
        String(cString: strerror(errno))
    }
}
