import Glibc

/// Where the development CA lives when the user names no directory: one CA
/// per user, so a device that trusted it keeps working whichever directory
/// Intact is started from.
extension CertificateAuthority {
    /// How the default directory is spelled in help texts.
    public static let defaultDirectoryDescription = "$XDG_DATA_HOME/intact, else ~/.local/share/intact"

    /// `$XDG_DATA_HOME/intact` when that variable holds an absolute path
    /// (the XDG Base Directory rule: a relative one is ignored), else
    /// `$HOME/.local/share/intact`, else the password database's home for
    /// this user. Reads only `environment`, so tests pass their own.
    public static func defaultDirectory(environment: [String: String]) -> String {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            return CertificateFiles.path(data, "intact")
        }
        let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? passwordDatabaseHome() ?? "/"
        return CertificateFiles.path(CertificateFiles.path(home, ".local/share"), "intact")
    }

    /// The home directory `getpwuid` gives for this process's user.
    private static func passwordDatabaseHome() -> String? {
        guard let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir else { return nil }
        let home = String(cString: directory)
        return home.isEmpty ? nil : home
    }
}
