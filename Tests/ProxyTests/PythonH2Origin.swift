import Foundation
import IntactTestSupport
import TLS

/// An HTTP/2 origin (Python's `h2`, Debian's python3-h2) on loopback, TLS
/// with a leaf for 127.0.0.1 from a CA of its own (`caFile`), one
/// connection at a time, each treated alike (see `Behaviour`).
final class PythonH2Origin {
    enum Behaviour {
        /// Sends SETTINGS_ENABLE_CONNECT_PROTOCOL = 1 and answers an extended
        /// CONNECT (RFC 8441) with 200, then echoes the stream's DATA and ends
        /// it when the client does. It prints `protocol <name> path <path>` for each.
        case extendedConnectEcho
    }

    let directory: String
    let port: Int
    let caFile: String
    private let process: Process

    private static let server = #"""
    import socket, ssl, sys
    import h2.config, h2.connection, h2.events, h2.settings
    port, cert, key, mode, limit = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.set_alpn_protocols(["h2"])
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(8)
    while True:
        raw, _ = listener.accept()
        try:
            s = context.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError):
            continue
        conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        if mode == "echo":
            conn.local_settings = h2.settings.Settings(client=False, initial_values={
                h2.settings.SettingCodes.ENABLE_CONNECT_PROTOCOL: 1})
        conn.initiate_connection()
        s.sendall(conn.data_to_send())
        while True:
            try:
                data = s.recv(65536)
            except OSError:
                break
            if not data:
                break
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.RequestReceived) and mode == "echo":
                    headers = dict(event.headers)
                    print("protocol %s path %s" % (headers.get(":protocol"), headers.get(":path")), flush=True)
                    conn.send_headers(event.stream_id, [(":status", "200")])
                elif isinstance(event, h2.events.DataReceived) and mode == "echo":
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    conn.send_data(event.stream_id, event.data)
                elif isinstance(event, h2.events.StreamEnded) and mode == "echo":
                    conn.end_stream(event.stream_id)
            s.sendall(conn.data_to_send())
        s.close()
    """#

    init(_ behaviour: Behaviour) throws {
        directory = TemporaryDirectory.create(prefix: "intact-h2-origin")
        let authority = try CertificateAuthority.create(in: directory + "/ca")
        let leaf = try authority.leaf(for: "127.0.0.1")
        try leaf.certificatePEM.write(toFile: directory + "/origin.pem", atomically: true, encoding: .utf8)
        caFile = authority.certificatePath
        port = try NginxOrigin.freePort()
        let mode: [String]
        switch behaviour {
        case .extendedConnectEcho: mode = ["echo", "0"]
        }
        process = try NginxOrigin.launch("/usr/bin/python3", ["-c", Self.server, String(port), directory + "/origin.pem",
                                                              authority.leafKeyPath] + mode, port: port)
    }

    func stop() {
        NginxOrigin.stop(process, removing: directory)
    }
}
