internal import COpenSSL

// OpenSSL calls these during `SSL_do_handshake`/`SSL_read`/`SSL_write`, which
// only a `TLSEngine` makes, on its caller's thread. Each free function recovers
// the engine from the SSL's app data (`TLSEngine.from(_:)`) and forwards.

extension TLSContext {
    /// Alert observation and key logging, for both roles.
    func installCommonCallbacks() {
        SSL_CTX_set_info_callback(pointer, infoCallback)
        if keyLog != nil {
            SSL_CTX_set_keylog_callback(pointer, keyLogCallback)
        }
    }

    /// SNI (and the per-name certificate) and ALPN selection.
    func installServerCallbacks() {
        _ = intact_SSL_CTX_set_tlsext_servername_callback(pointer, serverNameCallback)
        SSL_CTX_set_alpn_select_cb(pointer, alpnSelectCallback, nil)
    }

    /// With no client identity configured, note when a server asks for one, so a
    /// later "handshake failure" can be explained.
    func installClientCallbacks(observeCertificateRequests: Bool) {
        if observeCertificateRequests {
            SSL_CTX_set_client_cert_cb(pointer, clientCertificateCallback)
        }
    }
}

private func infoCallback(ssl: OpaquePointer?, where: Int32, value: Int32) {
    guard `where` & SSL_CB_ALERT != 0, let engine = TLSEngine.from(ssl) else { return }
    let alert = TLSAlert(code: UInt8(truncatingIfNeeded: value & 0xff))
    engine.observe(alert: alert, sent: `where` & SSL_CB_WRITE != 0)
}

private func keyLogCallback(ssl: OpaquePointer?, line: UnsafePointer<CChar>?) {
    guard let line, let engine = TLSEngine.from(ssl) else { return }
    engine.context.keyLog?.append(line: line)
}

private func serverNameCallback(ssl: OpaquePointer?, alert: UnsafeMutablePointer<Int32>?,
                                argument: UnsafeMutableRawPointer?) -> Int32 {
    guard let engine = TLSEngine.from(ssl) else { return SSL_TLSEXT_ERR_ALERT_FATAL }
    switch engine.serverNameReceived() {
    case .proceed:
        return SSL_TLSEXT_ERR_OK
    case .abort(let code):
        alert?.pointee = Int32(code.code)
        return SSL_TLSEXT_ERR_ALERT_FATAL
    }
}

private func alpnSelectCallback(ssl: OpaquePointer?, out: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                                outLength: UnsafeMutablePointer<UInt8>?, offered: UnsafePointer<UInt8>?,
                                offeredLength: UInt32, argument: UnsafeMutableRawPointer?) -> Int32 {
    guard let engine = TLSEngine.from(ssl), let out, let outLength, let offered else { return SSL_TLSEXT_ERR_NOACK }
    let wire = UnsafeBufferPointer(start: offered, count: Int(offeredLength))
    switch engine.selectALPN(offeredWire: wire) {
    case .selected(let range):
        // The selection points into the client's list, which OpenSSL keeps for the handshake.
        out.pointee = offered + range.lowerBound
        outLength.pointee = UInt8(range.count)
        return SSL_TLSEXT_ERR_OK
    case .none:
        return SSL_TLSEXT_ERR_NOACK
    case .abort:
        return SSL_TLSEXT_ERR_ALERT_FATAL
    }
}

private func clientCertificateCallback(ssl: OpaquePointer?, certificate: UnsafeMutablePointer<OpaquePointer?>?,
                                       key: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    TLSEngine.from(ssl)?.observeCertificateRequest()
    return 0  // no certificate to offer
}
