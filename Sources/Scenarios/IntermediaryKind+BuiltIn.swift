/// The products `intact scenario` knows, as data. Each runs in the
/// foreground as process groups the runner owns by PID, with every run-time
/// file in the run directory (`{{RUNDIR}}`, `{{WORKDIR}}`), on loopback only.
/// What each adds by default and how to make it transparent is in
/// `Docs/load-balancers.md`; the examples are in `Examples/loadbalancers/<name>/`.
extension IntermediaryKind {
    /// The shipped kinds, in the order `--help` and the docs list them.
    public static let builtIn: [IntermediaryKind] = [
        nginx, haproxy, apache, caddy, trafficServer, varnish, nghttpx, squid, tinyproxy,
    ]

    /// The name a scenario gives for a kind whose commands it states itself (`"command": {…}`).
    public static let commandKindName = "command"

    /// Every name `scenario.json` accepts for `intermediary`.
    public static var names: [String] { builtIn.map(\.name) + [commandKindName] }

    /// The built-in kind called `name`.
    public static func named(_ name: String) -> IntermediaryKind? {
        builtIn.first { $0.name == name }
    }

    /// nginx keeps its master process: in single-process mode
    /// (`master_process off`) nginx 1.22 dies of SIGSEGV at start when it
    /// inherits a listening socket through `NGINX`, as the runner hands it
    /// one. The runner stops the master with SIGTERM (it stops the worker);
    /// a SIGKILL goes to the process group, the worker included.
    static let nginx: IntermediaryKind = {
        let arguments = ["-p", "{{RUNDIR}}/", "-c", "{{CONFIG}}", "-e", "{{RUNDIR}}/nginx-error.log",
                         "-g", "daemon off; master_process on; worker_processes 1; pid {{RUNDIR}}/nginx.pid;"]
        return IntermediaryKind(
            name: "nginx", displayName: "nginx", packages: ["nginx"], defaultConfigFileName: "nginx.conf",
            check: CommandTemplate("nginx", ["-t"] + arguments),
            processes: [Process(name: "nginx", command: CommandTemplate("nginx", arguments),
                                listening: .inheritsSocket(environment: ["NGINX": "3;"]))],
            logFiles: ["{{RUNDIR}}/nginx-error.log"])
    }()

    /// HAProxy binds `{{LISTEN}}`, `fd@3` under the runner: the socket it
    /// reserved. A template written before `{{LISTEN}}` existed (`bind
    /// {{LISTEN_ADDRESS}}:{{LISTEN_PORT}}`) still runs: HAProxy then binds
    /// the port itself.
    static let haproxy = IntermediaryKind(
        name: "haproxy", displayName: "HAProxy", packages: ["haproxy"], defaultConfigFileName: "haproxy.cfg",
        check: CommandTemplate("haproxy", ["-c", "-f", "{{CONFIG}}"]),
        processes: [Process(name: "HAProxy", command: CommandTemplate("haproxy", ["-db", "-f", "{{CONFIG}}"]),
                            listening: .inheritsSocketWhereTemplateSaysListen)])

    /// Apache httpd 2.4 with an explicit module list (`LoadModule` lines in
    /// the template, no `/etc/apache2` include), in the foreground. Its
    /// children drop to the template's `User`; everything they touch is
    /// opened by the parent first.
    static let apache = IntermediaryKind(
        name: "apache", displayName: "Apache httpd", packages: ["apache2"], defaultConfigFileName: "apache2.conf",
        check: CommandTemplate("apache2", ["-t", "-f", "{{CONFIG}}"]),
        processes: [Process(name: "Apache httpd", command: CommandTemplate("apache2", ["-DFOREGROUND", "-f", "{{CONFIG}}"]))])

    /// Caddy 2 with its data and configuration directories in `{{WORKDIR}}`
    /// (no `~/.local/share/caddy`); a configuration named `Caddyfile` is
    /// adapted from the Caddyfile, `caddy.json` read as Caddy's JSON.
    static let caddy: IntermediaryKind = {
        let environment = ["XDG_DATA_HOME": "{{WORKDIR}}/data", "XDG_CONFIG_HOME": "{{WORKDIR}}/config", "HOME": "{{WORKDIR}}"]
        return IntermediaryKind(
            name: "caddy", displayName: "Caddy", packages: ["caddy"], defaultConfigFileName: "Caddyfile",
            check: CommandTemplate("caddy", ["validate", "--config", "{{CONFIG}}"], environment: environment),
            processes: [Process(name: "Caddy", command: CommandTemplate("caddy", ["run", "--config", "{{CONFIG}}"],
                                                                         environment: environment))])
    }()

    /// Apache Traffic Server 9 in a private runroot: `{{WORKDIR}}/runroot.yaml`
    /// points its configuration, logs, run-time files and cache into
    /// `{{WORKDIR}}` (without it, `traffic_server` reads `/etc/trafficserver`
    /// and writes `/var`). The scenario gives `records.config` and the files
    /// it lists (`remap.config`, `ssl_multicert.config`); the others are
    /// Debian's, copied from `/etc/trafficserver`, except `storage.config`,
    /// which points at `{{WORKDIR}}/cache`.
    static let trafficServer = IntermediaryKind(
        name: "trafficserver", displayName: "Apache Traffic Server", packages: ["trafficserver"],
        defaultConfigFileName: "records.config", configDirectory: "{{WORKDIR}}/etc",
        directories: ["{{WORKDIR}}/etc", "{{WORKDIR}}/run", "{{WORKDIR}}/log", "{{WORKDIR}}/cache"],
        generatedFiles: [
            GeneratedFile(path: "{{WORKDIR}}/runroot.yaml", text: """
                prefix: /usr
                exec_prefix: /usr
                bindir: /usr/bin
                sbindir: /usr/sbin
                sysconfdir: {{WORKDIR}}/etc
                datadir: {{WORKDIR}}/cache
                includedir: /usr/include
                libdir: /usr/lib/trafficserver
                libexecdir: /usr/lib/trafficserver/modules
                localstatedir: {{WORKDIR}}
                runtimedir: {{WORKDIR}}/run
                logdir: {{WORKDIR}}/log
                cachedir: {{WORKDIR}}/cache

                """),
            GeneratedFile(path: "{{WORKDIR}}/etc/storage.config", text: "{{WORKDIR}}/cache 64M\n", unlessProvided: true),
        ],
        copiesDefaultsFrom: "/etc/trafficserver",
        check: CommandTemplate("traffic_server", ["--run-root={{WORKDIR}}/runroot.yaml", "-C", "verify_config"]),
        processes: [Process(name: "Traffic Server",
                            command: CommandTemplate("traffic_server", ["--run-root={{WORKDIR}}/runroot.yaml"]))],
        logFiles: ["{{WORKDIR}}/log/diags.log"])

    /// Varnish Cache 7 behind hitch: hitch terminates TLS on
    /// `{{LISTEN_PORT}}` and hands plain HTTP to Varnish on `{{INNER_PORT}}`;
    /// Varnish speaks plain HTTP to its backend, tap B's plain listener
    /// (`{{UPSTREAM_PORT}}`, `intact proxy --listen-plain`), which
    /// re-encrypts to the server. hitch refuses to run as root: it drops to
    /// `nobody` once it has read the certificate. Varnish runs without its
    /// privilege-dropping jail (`-j none`: its default jail's user cannot
    /// read the run directory), its management interface off (`-T none`),
    /// its working directory in `{{WORKDIR}}`.
    static let varnish: IntermediaryKind = {
        let varnishArguments = ["-F", "-j", "none", "-f", "{{CONFIG}}", "-n", "{{WORKDIR}}/varnish", "-a",
                                "{{LISTEN_ADDRESS}}:{{INNER_PORT}}", "-T", "none", "-s", "malloc,32m"]
        return IntermediaryKind(
            name: "varnish", displayName: "Varnish", packages: ["varnish", "hitch"], defaultConfigFileName: "default.vcl",
            upstreamTLS: false,
            check: CommandTemplate("varnishd", ["-C", "-j", "none", "-f", "{{CONFIG}}", "-n", "{{WORKDIR}}/varnish"]),
            processes: [
                Process(name: "Varnish", command: CommandTemplate("varnishd", varnishArguments), listensOnPublicPort: false),
                Process(name: "hitch", command: CommandTemplate("hitch", [
                    "--daemon=off", "--user=nobody", "--group=nogroup", "--workers=1",
                    "--frontend=[{{LISTEN_ADDRESS}}]:{{LISTEN_PORT}}", "--backend=[{{LISTEN_ADDRESS}}]:{{INNER_PORT}}",
                    "{{CERT_BUNDLE}}",
                ])),
            ],
            extraPlaceholders: ["INNER_PORT"])
    }()

    /// nghttpx (nghttp2's proxy) with its configuration file; it has no
    /// configuration check: a bad file makes it exit at start, reported with its log.
    static let nghttpx = IntermediaryKind(
        name: "nghttpx", displayName: "nghttpx", packages: ["nghttp2-proxy"], defaultConfigFileName: "nghttpx.conf",
        check: nil,
        processes: [Process(name: "nghttpx", command: CommandTemplate("nghttpx", ["--conf={{CONFIG}}"]))])

    /// Squid 5 as a TLS-inspecting forward proxy (`ssl-bump`), from
    /// `squid-openssl`: the run makes it its own CA (`{{BUMP_CA_CERT}}`,
    /// `{{BUMP_CA_KEY}}`), which tap A trusts, and a certificate database
    /// for `security_file_certgen` in `{{WORKDIR}}/ssl_db`. Squid drops to
    /// `proxy`, which owns `{{WORKDIR}}`. `-N`: no daemon, no kid processes.
    static let squid = IntermediaryKind(
        name: "squid", displayName: "Squid", packages: ["squid-openssl"], defaultConfigFileName: "squid.conf",
        topology: .forward, workUser: "proxy",
        setup: [CommandTemplate("/usr/lib/squid/security_file_certgen", ["-c", "-s", "{{WORKDIR}}/ssl_db", "-M", "4MB"])],
        check: CommandTemplate("squid", ["-k", "parse", "-f", "{{CONFIG}}"]),
        processes: [Process(name: "Squid", command: CommandTemplate("squid", ["-N", "-f", "{{CONFIG}}"]))],
        extraPlaceholders: ["BUMP_CA_CERT", "BUMP_CA_KEY"], logFiles: ["{{WORKDIR}}/cache.log"], bumpsTLS: true,
        mintedCertificates: "{{WORKDIR}}/ssl_db/certs")

    /// tinyproxy as a forward proxy that only tunnels (CONNECT): TLS goes
    /// from tap A to tap B through it unopened. No configuration check.
    static let tinyproxy = IntermediaryKind(
        name: "tinyproxy", displayName: "tinyproxy", packages: ["tinyproxy"], defaultConfigFileName: "tinyproxy.conf",
        topology: .forward, check: nil,
        processes: [Process(name: "tinyproxy", command: CommandTemplate("tinyproxy", ["-d", "-c", "{{CONFIG}}"]))])

    /// A kind from a scenario's own commands (`"intermediary": "command"`),
    /// for a product Intact does not ship (Envoy, Traefik, an appliance's
    /// image): one process that binds `{{LISTEN_PORT}}` itself.
    public static func command(displayName: String, packages: [String], check: CommandTemplate?, run: CommandTemplate,
                               topology: Topology, upstreamTLS: Bool, configFileName: String) -> IntermediaryKind {
        IntermediaryKind(name: commandKindName, displayName: displayName, packages: packages,
                         defaultConfigFileName: configFileName, topology: topology, upstreamTLS: upstreamTLS, check: check,
                         processes: [Process(name: displayName, command: run)])
    }
}
