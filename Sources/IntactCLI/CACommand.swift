import Foundation
import TLS

/// `intact ca`: create, show and use the development certificate authority
/// whose certificates Intact presents when it intercepts TLS.
///
/// Every subcommand blocks on disk I/O and key generation; they run on the
/// main thread of a short-lived process.
enum CACommand {
    /// The password of PKCS#12 files when `--password` is not given.
    static let defaultPassword = "intact"

    /// `--dir DIR`, taken by every command that uses the CA.
    struct DirectoryGroup: OptionGroup {
        let directory = Option.value("dir", .string("DIR"), help: "directory of the development CA",
                                     default: CertificateAuthority.defaultDirectory)
    }

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
        let directory = DirectoryGroup()
    }

    static let directoryOptions = DirectoryGroup()
    static let issueClientOptions = IssueClientOptions()

    static let command = Command(
        name: "ca",
        summary: "Manage the development CA that signs the certificates Intact presents.",
        discussion: """
            The CA is one directory (mode 0700): ca-cert.pem, the certificate to trust on
            the device or client under test; ca-key.pem and leaf-key.pem (mode 0600).
            Intact refuses a directory or key file that group or others can read.
            Never commit the directory.
            """,
        subcommands: [initCommand, issueClientCommand, showCommand])

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

    // MARK: Running

    private static func runInit(_ arguments: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let directory = arguments[directoryOptions.directory]
        let output = context.standardOutput
        if CertificateAuthority.exists(in: directory) {
            let authority = try CertificateAuthority.load(from: directory)
            output.line("A development CA already exists in \(directory); it was not overwritten.")
            describe(authority, to: output)
        } else {
            let authority = try CertificateAuthority.create(in: directory)
            output.line("Created a development CA in \(directory).")
            describe(authority, to: output)
        }
        return ExitStatus.success
    }

    private static func runIssueClient(_ arguments: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let options = issueClientOptions
        let name = arguments.requiredArgument("NAME")
        let file = arguments[options.out]
        let password = arguments[options.password]
        let days = arguments[options.validityDays]
        let directory = arguments[options.directory.directory]
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
        let directory = arguments[directoryOptions.directory]
        guard CertificateAuthority.exists(in: directory) else {
            throw CommandFailure("no development CA in \(directory) (no \(CertificateAuthority.certificateFileName)); "
                                 + "create one with: intact ca init --dir \(directory)")
        }
        describe(try CertificateAuthority.load(from: directory), to: context.standardOutput)
        return ExitStatus.success
    }

    // MARK: Helpers

    /// The CA's certificate, files, and how to trust it.
    private static func describe(_ authority: CertificateAuthority, to output: OutputWriter) {
        output.line("  Subject:      \(authority.subject)")
        output.line("  SHA-256:      \(authority.sha256Fingerprint)")
        output.line("  Valid:        \(timestamp(authority.notBefore)) to \(timestamp(authority.notAfter))")
        output.line("  Certificate:  \(authority.certificatePath)")
        output.line("  CA key:       \(authority.keyPath) (mode 0600)")
        output.line("  Leaf key:     \(authority.leafKeyPath) (mode 0600)")
        output.line("Trust it:")
        output.line("  curl:     curl --cacert \(authority.certificatePath) https://HOST/")
        output.line("  devices:  install \(authority.certificatePath) as a trusted CA certificate")
        output.line("            (Android: a user CA; iOS: install the profile, then enable full trust)")
    }

    private static func timestamp(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }
}
