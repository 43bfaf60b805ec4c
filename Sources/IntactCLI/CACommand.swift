import Foundation
import Glibc
import TLS

/// `intact ca`: create, show and use the development certificate authority
/// whose certificates Intact presents when it intercepts TLS.
///
/// Every subcommand blocks on disk I/O and key generation; they run on the
/// main thread of a short-lived process.
enum CACommand {
    /// The password of PKCS#12 files when `--password` is not given.
    static let defaultPassword = "intact"


    /// The options of `intact ca issue-client`, in `--help` order.
    struct IssueClientOptions: OptionGroup {
        let out = Option.required("out", .string("FILE"), help: "PKCS#12 file to write (mode 0600, never overwritten)")
        let password = Option.value("password", .string("PASSWORD"), help: "password that protects the PKCS#12 file",
                                    default: defaultPassword)
        let validityDays = Option.value(
            "validity-days", .integer(in: CertificateAuthority.clientValidityRange),
            help: "days the certificate is valid (\(CertificateAuthority.clientValidityRange.lowerBound)-"
                + "\(CertificateAuthority.clientValidityRange.upperBound))",
            default: 365)
        let directory = CASubcommandDirectoryOptions()
    }

    /// The options of `intact ca export`.
    struct ExportOptions: OptionGroup {
        let format = Option.value("format", .choice(CAExportFormat.allCases, "FORMAT"),
                                  help: CAExportFormat.allCases.map(\.rawValue).joined(separator: ", "), default: .pem,
                                  shownDefault: "pem")
        let out = Option.optional("out", .string("FILE"),
                                  help: "file to write (never overwritten; a directory gets the format's file name); "
                                      + "default: standard output")
        let directory = CASubcommandDirectoryOptions()
    }

    static let directoryOptions = CASubcommandDirectoryOptions()
    static let issueClientOptions = IssueClientOptions()
    static let exportOptions = ExportOptions()

    static let command = Command(
        name: "ca",
        summary: "Manage the development CA that signs the certificates Intact presents.",
        discussion: """
            The CA is one directory (mode 0700): ca-cert.pem, the certificate to trust on
            the device or client under test; ca-key.pem and leaf-key.pem (mode 0600).
            By default there is one per user, in \(CertificateAuthority.defaultDirectoryDescription),
            made on first use by any command; --ca-dir names another.
            Intact refuses a directory or key file that group or others can read.
            Never commit the directory.
            """,
        subcommands: [initCommand, issueClientCommand, showCommand, exportCommand])

    static let initCommand = Command(
        name: "init",
        summary: "Create the development CA (an existing one is shown, never overwritten).",
        options: directoryOptions,
        run: runInit)

    static let issueClientCommand = Command(
        name: "issue-client",
        summary: "Issue a client certificate signed by the CA, as a PKCS#12 file.",
        discussion: """
            For gateways that ask for a client certificate. Creates the CA first
            when the directory holds none.
            """,
        arguments: [CommandArgument("NAME", help: "common name (CN) of the certificate")],
        options: issueClientOptions,
        run: runIssueClient)

    static let showCommand = Command(
        name: "show",
        summary: "Show the CA certificate and how to trust it.",
        options: directoryOptions,
        run: runShow)

    static let exportCommand = Command(
        name: "export",
        summary: "Write the CA certificate in the form a device or tool installs.",
        discussion: """
            Formats: pem (curl, Linux, Firefox); der (.crt: Android's "Install certificate",
            Windows); p12 (the certificate alone, no password: Windows, macOS); mobileconfig
            (an iOS/iPadOS profile with one root-certificate payload; its UUID comes from the
            CA, so installing it again replaces it); android-system (the <subject_hash_old>.0
            file of Android's system store, for rooted emulators). No form holds a key.
            Creates the CA first when the directory holds none.
            """,
        options: exportOptions,
        run: runExport)

    // MARK: Running

    private static func runInit(_ arguments: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let directory = try directoryOptions.directory(arguments, context)
        let output = context.standardOutput
        let (authority, created) = try CertificateAuthority.loadOrCreate(in: directory)
        output.line(created ? "Created a development CA in \(directory)."
                            : "A development CA already exists in \(directory); it was not overwritten.")
        describe(authority, to: output)
        return ExitStatus.success
    }

    private static func runIssueClient(_ arguments: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let options = issueClientOptions
        let name = arguments.requiredArgument("NAME")
        let file = arguments[options.out]
        let password = arguments[options.password]
        let days = arguments[options.validityDays]
        let directory = try options.directory.directory(arguments, context)
        let output = context.standardOutput
        let (authority, created) = try CertificateAuthority.loadOrCreate(in: directory)
        if created {
            output.line("Created a development CA in \(directory) (trust \(authority.certificatePath)).")
        }
        let issued = try authority.issueClient(commonName: name, validityDays: days, password: password)
        try PKCS12.write(issued.pkcs12, toFile: file)
        let passwordGiven = arguments.isGiven(options.password)
        output.line("Issued a client certificate for \(issued.identity.subject): \(file) (PKCS#12, mode 0600).")
        output.line("  SHA-256:   \(issued.identity.sha256Fingerprint)")
        output.line("  Valid:     \(timestamp(issued.identity.notBefore)) to \(timestamp(issued.identity.notAfter))")
        output.line("  Issuer:    \(issued.identity.issuer)")
        output.line("  Password:  " + (passwordGiven ? "as given with --password" : "\(defaultPassword) (the default)"))
        output.line("Use it with curl:")
        output.line("  curl --cert-type P12 --cert \(file):\(passwordGiven ? "PASSWORD" : defaultPassword) --cacert \(authority.certificatePath) https://HOST/")
        return ExitStatus.success
    }

    private static func runShow(_ arguments: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let directory = try directoryOptions.directory(arguments, context)
        guard CertificateAuthority.exists(in: directory) else {
            throw CommandFailure("no development CA in \(directory) (no \(CertificateAuthority.certificateFileName)); "
                                 + "create one with: intact ca init --ca-dir \(directory)")
        }
        context.standardOutput.line("Development CA in \(directory):")
        describe(try CertificateAuthority.load(from: directory), to: context.standardOutput)
        return ExitStatus.success
    }

    private static func runExport(_ arguments: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let format = arguments[exportOptions.format]
        let directory = try exportOptions.directory.directory(arguments, context)
        let (authority, created) = try CertificateAuthority.loadOrCreate(in: directory)
        if created { context.standardError.line("Created a development CA in \(directory).") }
        let bytes = try authority.export(format)
        guard var file = arguments[exportOptions.out] else {
            context.standardOutput.write(bytes)
            if format == .androidSystem {
                context.standardError.line("Save it as \(authority.exportFileName(format)) (the name Android's system store needs).")
            }
            return ExitStatus.success
        }
        var info = stat()
        if stat(file, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR {
            file = (file.hasSuffix("/") ? file : file + "/") + authority.exportFileName(format)
        }
        try CertificateAuthority.writeExport(bytes, toFile: file)
        context.standardError.line("Wrote \(file) (\(format.rawValue), \(bytes.count) bytes; SHA-256 of the CA \(authority.sha256Fingerprint)).")
        return ExitStatus.success
    }

    // MARK: Helpers

    /// The CA's certificate, files, and how to trust it.
    private static func describe(_ authority: CertificateAuthority, to output: OutputWriter) {
        output.line("  Subject:      \(authority.subject)")
        output.line("  SHA-256:      \(authority.sha256Fingerprint)")
        output.line("  SPKI SHA-256: \(authority.certificateSPKIHash) (the CA's key, base64)")
        output.line("  Leaf SPKI:    \(authority.leafSPKIHash) (the key every minted leaf shares)")
        output.line("  Valid:        \(timestamp(authority.notBefore)) to \(timestamp(authority.notAfter))")
        output.line("  Certificate:  \(authority.certificatePath)")
        output.line("  CA key:       \(authority.keyPath) (mode 0600)")
        output.line("  Leaf key:     \(authority.leafKeyPath) (mode 0600)")
        output.line("Trust it:")
        output.line("  curl:      curl --cacert \(authority.certificatePath) https://HOST/")
        output.line("  Chromium:  --ignore-certificate-errors-spki-list=\(authority.leafSPKIHash)")
        output.line("  devices:   open http://intact.proxy/ with the device's proxy set to Intact, or")
        output.line("             intact ca export --format der|mobileconfig|android-system (Docs/devices.md)")
        output.line("  Linux:     sudo cp \(authority.certificatePath) /usr/local/share/ca-certificates/intact-ca.crt"
                    + " && sudo update-ca-certificates")
    }

    private static func timestamp(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }
}
