import Foundation
import IntactTestSupport
import Glibc
import Hashing
import TLS
import XCTest

/// An nginx origin on loopback for the loopback tests: TLS with a leaf for
/// 127.0.0.1 from a CA of its own (`caFile`), HTTP/1.1 and HTTP/2 (ALPN),
/// static files from `root`, and `PUT` (WebDAV) storing uploads under
/// `root`, so both directions can be checked by SHA-256. Started and stopped
/// by PID; everything lives in a temporary directory removed at the end.
final class NginxOrigin {
    let directory: String
    let port: Int
    /// The CA the origin's certificate leads to (for `--upstream-ca`).
    let caFile: String
    /// The CA that also issues client certificates the origin accepts.
    let authority: CertificateAuthority
    private let process: Process

    var root: String { directory + "/www" }

    func url(_ path: String) -> String { "https://127.0.0.1:\(port)\(path)" }

    /// Starts nginx and waits until it accepts connections. `http2`: offer h2
    /// by ALPN (else HTTP/1.1 only); `requireClientCertificate`: refuse
    /// requests without a client certificate issued by `authority`;
    /// `keepaliveRequests`: the requests nginx serves on one connection before
    /// it closes it (HTTP/1.1) or sends GOAWAY (HTTP/2).
    /// `serverExtra`: more directives for the `server` block.
    init(http2: Bool = true, requireClientCertificate: Bool = false, keepaliveRequests: Int = 100000,
         serverExtra: String = "") throws {
        directory = TemporaryDirectory.create(prefix: "intact-origin")
        for sub in ["www", "tmp", "logs"] {
            try FileManager.default.createDirectory(atPath: directory + "/" + sub, withIntermediateDirectories: true)
        }
        authority = try CertificateAuthority.create(in: directory + "/ca")
        let leaf = try authority.leaf(for: "127.0.0.1")
        try leaf.certificatePEM.write(toFile: directory + "/origin.pem", atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(atPath: authority.leafKeyPath, toPath: directory + "/origin.key")
        caFile = authority.certificatePath
        port = try NginxOrigin.freePort()
        let configuration = """
            worker_processes 1;
            user root;
            daemon off;
            pid \(directory)/nginx.pid;
            error_log \(directory)/logs/error.log warn;
            events { worker_connections 512; }
            http {
                access_log off;
                client_body_temp_path \(directory)/tmp/body;
                proxy_temp_path \(directory)/tmp/proxy;
                fastcgi_temp_path \(directory)/tmp/fastcgi;
                uwsgi_temp_path \(directory)/tmp/uwsgi;
                scgi_temp_path \(directory)/tmp/scgi;
                default_type application/octet-stream;
                keepalive_requests \(keepaliveRequests);
                server {
                    listen 127.0.0.1:\(port) ssl\(http2 ? " http2" : "");
                    ssl_certificate \(directory)/origin.pem;
                    ssl_certificate_key \(directory)/origin.key;
                    \(requireClientCertificate ? "ssl_verify_client on; ssl_client_certificate \(authority.certificatePath);" : "")
                    root \(directory)/www;
                    client_max_body_size 0;
                    dav_methods PUT;
                    create_full_put_path on;
                    \(serverExtra)
                }
            }
            """
        try configuration.write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
        process = try NginxOrigin.launch("/usr/sbin/nginx", ["-p", directory, "-c", directory + "/nginx.conf"], port: port)
    }

    /// Stops nginx (SIGTERM to the master by PID) and removes the directory.
    func stop() {
        NginxOrigin.stop(process, removing: directory)
    }

    /// Starts a server process, its output discarded, and waits until it accepts connections on `port`.
    static func launch(_ executable: String, _ arguments: [String], port: Int) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try waitUntilListening(port: port, process: process)
        return process
    }

    /// Stops a process `launch` started (SIGTERM, then waits) and removes `directory`.
    static func stop(_ process: Process, removing directory: String) {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }

    /// Writes a file of `size` deterministic pseudo-random bytes under the root; returns its SHA-256 (hex).
    @discardableResult
    func serve(_ name: String, size: Int) throws -> String {
        try NginxOrigin.writePatternFile(root + "/" + name, size: size)
    }

    /// A port nothing listens on right now (bound to 0, then released).
    static func freePort() throws -> Int {
        let (fd, port) = try RawSocket.bindLoopback()
        close(fd)
        return port
    }

    /// Waits (up to 10 s) until a TCP connect to the port succeeds.
    static func waitUntilListening(port: Int, process: Process?) throws {
        for _ in 0..<500 {
            if let process, !process.isRunning { throw TestSetupFailure("the server exited before listening") }
            if let fd = RawSocket.connect(port: port) {
                close(fd)
                return
            }
            usleep(20_000)
        }
        throw TestSetupFailure("nothing listens on 127.0.0.1:\(port)")
    }

    /// Starts an origin serving pattern files of these sizes; returns it and each file's SHA-256 by name.
    static func serving(_ files: [(name: String, size: Int)]) throws -> (NginxOrigin, [String: String]) {
        let origin = try NginxOrigin()
        var digests: [String: String] = [:]
        for (name, size) in files { digests[name] = try origin.serve(name, size: size) }
        return (origin, digests)
    }

    /// Writes `size` bytes of a fast deterministic pattern; returns the SHA-256 hex.
    static func writePatternFile(_ path: String, size: Int) throws -> String {
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let handle = FileHandle(forWritingAtPath: path) else { throw TestSetupFailure("cannot create \(path)") }
        defer { handle.closeFile() }
        var hasher = SHA256()
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15 &+ UInt64(size)
        var remaining = size
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while remaining > 0 {
            let count = min(remaining, chunk.count)
            chunk.withUnsafeMutableBytes { raw in
                let words = raw.bindMemory(to: UInt64.self)
                for index in 0..<(count + 7) / 8 where index < words.count {
                    state = state &* 6364136223846793005 &+ 1442695040888963407
                    words[index] = state
                }
            }
            let slice = chunk[0..<count]
            hasher.update(slice)
            handle.write(Data(slice))
            remaining -= count
        }
        return Encoding.hex(hasher.finalize())
    }

    /// The SHA-256 (hex) of a file, read in 1 MiB chunks.
    static func sha256(ofFile path: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw TestSetupFailure("cannot read \(path)") }
        defer { handle.closeFile() }
        var hasher = SHA256()
        while true {
            let data = handle.readData(ofLength: 1 << 20)
            if data.isEmpty { break }
            hasher.update([UInt8](data))
        }
        return Encoding.hex(hasher.finalize())
    }
}

/// One nginx origin shared by every test of a class: `start()` in the class's
/// `setUp`, `stop()` (by PID) in its `tearDown`, `started()` in a test.
/// `@unchecked Sendable`: XCTest calls a class's setUp, tests and tearDown one
/// after another, so `origin` and `digests` are never touched at once.
final class SharedNginxOrigin: @unchecked Sendable {
    private let files: [(name: String, size: Int)]
    private(set) var origin: NginxOrigin?
    /// SHA-256 (hex) of each file served, by name.
    private(set) var digests: [String: String] = [:]

    init(_ files: [(name: String, size: Int)]) {
        self.files = files
    }

    func start() {
        do {
            (origin, digests) = try NginxOrigin.serving(files)
        } catch {
            XCTFail("cannot start the nginx origin: \(error)")
        }
    }

    func stop() {
        origin?.stop()
        origin = nil
    }

    /// The running origin, or a test failure saying it never started.
    func started() throws -> NginxOrigin {
        try XCTUnwrap(origin, "no nginx origin")
    }
}
