import Evidence
import Transport
import Wire

/// What one event loop of the proxy holds: its client connections and the
/// pool of upstream connections they share (kept alive across client
/// connections, closed when idle for a minute).
///
/// `@unchecked Sendable`: made off the loop, then touched only on `loop`
/// (each method says "called only on the loop").
final class LoopState: @unchecked Sendable {
    let loop: EventLoop
    let pool: HTTPClientPool
    private var drivers: [ObjectIdentifier: DownstreamDriver] = [:]
    /// Set once the proxy stops: new connections are closed at once.
    private(set) var isDraining = false
    /// True from the moment the recording writer had no room until it has:
    /// every client connection of this loop (and each new one) is held
    /// (`ByteChannel.isHeld`), so no new request or request body is read.
    /// The one place that decides; see `holdReading(until:)`.
    private(set) var isHoldingReads = false
    /// The records this loop finished since its last hand-over to the
    /// recording writer (see `RecordingSink`, which alone adds to it and
    /// hands it over).
    var recordingBatch = RecordingBatch()

    init(loop: EventLoop, pool: HTTPClientPool.Configuration) {
        self.loop = loop
        self.pool = HTTPClientPool(loop: loop, configuration: pool)
    }

    /// Called only on the loop.
    func add(_ driver: DownstreamDriver) {
        loop.preconditionOnLoop()
        drivers[ObjectIdentifier(driver)] = driver
        if isHoldingReads { driver.channel.isHeld = true }
    }

    /// The recording writer has no room: holds every client connection of
    /// this loop until `writer.whenRoom` fires, then lets them read again on
    /// the loop. Records already on their way are still queued (none is
    /// dropped) and the loop never waits. Called only on the loop.
    func holdReading(until writer: RecordingWriter) {
        loop.preconditionOnLoop()
        guard !isHoldingReads else { return }
        isHoldingReads = true
        setHeld(true)
        writer.whenRoom { [self] in
            loop.execute { [self] in
                isHoldingReads = false
                setHeld(false)
            }
        }
    }

    private func setHeld(_ held: Bool) {
        for driver in drivers.values { driver.channel.isHeld = held }
    }

    /// Called only on the loop.
    func remove(_ driver: DownstreamDriver) {
        loop.preconditionOnLoop()
        drivers[ObjectIdentifier(driver)] = nil
    }

    /// Asks every client connection to finish what it is doing and close.
    /// Called only on the loop.
    func beginDrain() {
        loop.preconditionOnLoop()
        isDraining = true
        for driver in drivers.values { driver.drain() }
    }

    /// Cuts every connection still open (recording their exchanges as
    /// broken) and closes the upstream pool; returns how many exchanges were
    /// cut. Called only on the loop.
    func terminate() -> Int {
        loop.preconditionOnLoop()
        var cut = 0
        for driver in Array(drivers.values) { cut += driver.terminate() }
        drivers.removeAll()
        pool.close()
        return cut
    }
}
