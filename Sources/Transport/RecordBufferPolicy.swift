/// When a TLS channel keeps OpenSSL's record buffers between records
/// (`TLSEngine.keepRecordBuffers`). No I/O and no timer: `ByteChannel` tells
/// it of each read of application bytes and of each idle check it ran, and
/// does what it answers.
///
/// Released after every record (the engine's default), an idle keep-alive
/// connection holds none of the ~34 KiB, but a busy one allocates and frees
/// both buffers for every record it reads and writes (four allocations per
/// proxied request over two TLS legs). So a channel releases them until its
/// `readsBeforeKeeping`-th read, then keeps them; from then on the driver
/// checks every `idleCheckInterval` whether anything was read since the last
/// check, and a channel that read nothing gives them back and counts again.
/// Reads, not writes, are counted: a request and its answer are one read, so
/// a connection that carried one request and went idle never keeps.
///
/// Invariants:
/// - `keeping` is true exactly between a `noteRead()` that answered `true`
///   and an `idleCheck()` that answered `.release`; the driver arms one
///   check for each `true` and one more for each `.checkAgain`, so a keeping
///   channel always has exactly one check armed.
/// - A channel that read once (one request, then idle) never keeps: idle
///   memory is unchanged.
struct RecordBufferPolicy {
    /// The read at which a releasing channel starts keeping: the second.
    static let readsBeforeKeeping = 2
    /// How often a keeping channel is checked for idleness: buffers of an
    /// idle connection go back within twice this.
    static let idleCheckInterval: Duration = .seconds(1)

    /// True while the buffers are kept.
    private(set) var keeping = false
    /// Reads since the channel last started releasing (while releasing),
    /// or since the last idle check (while keeping).
    private var reads = 0

    /// What an idle check found.
    enum CheckOutcome: Equatable {
        /// Something was read since the last check: keep the buffers, check again later.
        case checkAgain
        /// Nothing came: release the buffers; no check is armed.
        case release
    }

    /// Counts one read. True when the channel starts keeping now: the
    /// driver keeps the buffers and arms an idle check.
    mutating func noteRead() -> Bool {
        reads &+= 1
        guard !keeping, reads >= RecordBufferPolicy.readsBeforeKeeping else { return false }
        keeping = true
        reads = 0
        return true
    }

    /// The armed idle check ran. Only called while `keeping`.
    mutating func idleCheck() -> CheckOutcome {
        precondition(keeping, "an idle check runs only while the buffers are kept")
        if reads > 0 {
            reads = 0
            return .checkAgain
        }
        keeping = false
        return .release
    }
}
