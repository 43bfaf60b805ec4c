import Glibc
import Hashing

/// Making a directory of new files appear all at once, so that two
/// processes creating the same CA at the same moment never see (or make) a
/// half-written one.
///
/// - A directory that does not exist yet, or is empty, is built as a hidden
///   sibling (`.NAME.tmp-PID-RANDOM`, mode 0700) and renamed into place:
///   `rename(2)` is atomic and replaces only an empty directory, so exactly
///   one process wins and the others see `.alreadyExists`.
/// - A directory that already holds other files (a `certs/` with a README)
///   is filled in place while holding an exclusive `flock` on its
///   `.intact-ca.lock` file; the files are written under temporary names and
///   renamed, the marker file last. Readers take the same lock, so a process
///   that finds a CA being made there waits for it.
///
/// Blocks on disk I/O (and on the lock): never call on a loop queue.
extension CertificateFiles {
    /// A file to publish: its name inside the directory, bytes, mode.
    struct NewFile {
        var name: String
        var bytes: [UInt8]
        var mode: mode_t
    }

    /// The lock file of a CA directory filled in place.
    static let lockFileName = ".intact-ca.lock"

    /// Publishes `files` into `directory` (the last file is the marker whose
    /// presence means "complete"). Throws `.alreadyExists(marker)` when the
    /// marker is already there, or when another process published first.
    static func publish(_ files: [NewFile], in directory: String) throws {
        guard let marker = files.last else { return }
        let markerPath = path(directory, marker.name)
        if let parent = parentDirectory(of: directory), !exists(parent) {
            try makeDirectories(parent)
        }
        if isMissingOrEmptyDirectory(directory) {
            try publishByRename(files, in: directory, markerPath: markerPath)
        } else {
            try withDirectoryLock(directory) {
                if exists(markerPath) { throw CertificateError.alreadyExists(file: markerPath) }
                try publishInPlace(files, in: directory)
            }
        }
    }

    /// Runs `body` holding the lock of `directory`: exclusive (creating
    /// the lock file) to fill it, shared to read it. A reader finds no lock
    /// file when no process ever filled the directory in place, and then
    /// locks nothing.
    static func withDirectoryLock<T>(_ directory: String, exclusive: Bool = true, _ body: () throws -> T) throws -> T {
        let lockPath = path(directory, lockFileName)
        let descriptor = exclusive ? open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
                                   : open(lockPath, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if !exclusive && errno == ENOENT { return try body() }
            throw CertificateError.unwritable(file: lockPath, reason: errnoText())
        }
        defer { close(descriptor) }
        while flock(descriptor, exclusive ? LOCK_EX : LOCK_SH) != 0 {
            guard errno == EINTR else { throw CertificateError.unwritable(file: lockPath, reason: errnoText()) }
        }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    private static func publishByRename(_ files: [NewFile], in directory: String, markerPath: String) throws {
        let temporary = temporarySibling(of: directory)
        guard mkdir(temporary, 0o700) == 0 else {
            throw CertificateError.unwritable(file: temporary, reason: errnoText() + directoryFix)
        }
        defer {
            for file in files { remove(path(temporary, file.name)) }
            rmdir(temporary)
        }
        guard chmod(temporary, 0o700) == 0 else { throw CertificateError.unwritable(file: temporary, reason: errnoText()) }
        for file in files {
            try writeNew(path(temporary, file.name), file.bytes, mode: file.mode)
        }
        if rename(temporary, directory) != 0 {
            // Another process renamed its CA into place first (or filled the directory meanwhile).
            if errno == EEXIST || errno == ENOTEMPTY { throw CertificateError.alreadyExists(file: markerPath) }
            throw CertificateError.unwritable(file: directory, reason: errnoText())
        }
        syncDirectory(parentDirectory(of: directory) ?? ".")
    }

    private static func publishInPlace(_ files: [NewFile], in directory: String) throws {
        try makePrivateDirectory(directory)
        let suffix = ".tmp-\(getpid())"
        var renamed: [String] = []
        do {
            for file in files {
                let final = path(directory, file.name)
                let temporary = final + suffix
                remove(temporary)
                try writeNew(temporary, file.bytes, mode: file.mode)
                guard link(temporary, final) == 0 else {
                    let failure: CertificateError = errno == EEXIST
                        ? .alreadyExists(file: final) : .unwritable(file: final, reason: errnoText())
                    remove(temporary)
                    throw failure
                }
                remove(temporary)
                renamed.append(final)
            }
        } catch {
            renamed.forEach(remove)
            throw error
        }
        syncDirectory(directory)
    }

    /// True when nothing is at `directory`, or an empty directory is.
    private static func isMissingOrEmptyDirectory(_ directory: String) -> Bool {
        guard let handle = opendir(directory) else { return errno == ENOENT }
        defer { closedir(handle) }
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { return false }
        }
        return true
    }

    /// `.NAME.tmp-PID-RANDOM` next to `directory`.
    private static func temporarySibling(of directory: String) -> String {
        var trimmed = directory
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        let name = trimmed.split(separator: "/").last.map(String.init) ?? trimmed
        let parent = parentDirectory(of: trimmed)
        let hidden = ".\(name).tmp-\(getpid())-\(Encoding.hex(SecureRandom.bytes(4)))"
        return parent.map { path($0, hidden) } ?? hidden
    }

    /// What to do when a CA directory cannot be made there.
    private static let directoryFix = "; make its parent writable, or choose another directory with --ca-dir"

    /// Makes a rename or new file in `directory` durable (best effort).
    private static func syncDirectory(_ directory: String) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }
}
