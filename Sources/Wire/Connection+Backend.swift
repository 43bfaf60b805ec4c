import Glibc

/// The few places a `Connection` touches what carries its bytes: a socket's
/// system calls, or an embedded peer's buffers. Everything above them
/// (turns, watermarks, pausing, half-close, teardown) is one code path for both.
extension Connection {
    /// Starts announcing readiness: registers the socket with the loop's
    /// poller, or attaches to the embedded peer (which announces bytes it
    /// already holds, as a registration announces pending input).
    func registerBackend() throws(WireError) {
        switch backend {
        case .socket(let descriptor):
            pollToken = try loop.register(self, descriptor: descriptor)
        case .memory(let peer):
            peer.attach(self)
        }
    }

    /// Stops announcing readiness (the descriptor stays open until `releaseBackend`).
    func deregisterBackend() {
        guard case .socket(let descriptor) = backend, let pollToken else { return }
        loop.deregister(pollToken, descriptor: descriptor)
        self.pollToken = nil
    }

    /// Closes the descriptor, or tells the embedded peer the connection is gone. Once.
    func releaseBackend() {
        switch backend {
        case .socket(let descriptor): Socket.close(descriptor)
        case .memory(let peer): peer.connectionReleased()
        }
    }

    /// Makes the coming release a reset (`SO_LINGER` 0: RST instead of FIN).
    func resetOnRelease() {
        switch backend {
        case .socket(let descriptor): Socket.setLingerZero(descriptor)
        case .memory(let peer): peer.connectionReset()
        }
    }

    /// `read(2)`: bytes read, 0 at EOF, or -1 with `errno` set.
    func readBackend(into buffer: UnsafeMutableRawPointer, count: Int) -> Int {
        switch backend {
        case .socket(let descriptor): return Glibc.read(descriptor, buffer, count)
        case .memory(let peer): return peer.connectionReads(into: buffer, count: count)
        }
    }

    /// `writev(2)`: bytes taken, or -1 with `errno` set.
    func writevBackend(_ vectors: UnsafeBufferPointer<iovec>) -> Int {
        switch backend {
        case .socket(let descriptor): return writev(descriptor, vectors.baseAddress, Int32(vectors.count))
        case .memory(let peer): return peer.connectionWrites(vectors)
        }
    }

    /// `shutdown(SHUT_WR)`: the FIN.
    func shutdownBackendWrite() {
        switch backend {
        case .socket(let descriptor):
            // ENOTCONN here means the peer already reset; the read side reports it.
            _ = Glibc.shutdown(descriptor, Int32(SHUT_WR))
        case .memory(let peer):
            peer.connectionFinishedWriting()
        }
    }
}
