/// The header block an `HTTP2Session` is decoding: the fields of one HEADERS
/// frame and its CONTINUATION frames, as nghttp2's header callback hands
/// them over.
///
/// One per session, not one per stream: a header block is contiguous on the
/// connection (RFC 9113 §4.3, §6.10: no other frame may come between a
/// HEADERS frame and its CONTINUATIONs), so nghttp2 decodes one block at a
/// time. That lets the header callback append without looking its stream up,
/// and lets the field array start at the size the last block needed instead
/// of growing from empty on every head.
///
/// Invariants: `stream` is the block's stream when the session tracks it,
/// 0 while no block is open or its stream is unknown (its fields are then
/// decoded by nghttp2, to keep HPACK in step, and dropped here); `size` is
/// the RFC 9113 §6.5.2 size of the fields received so far (name + value +
/// 32 each), counted also after `tooLarge` dropped them.
struct HTTP2HeaderBlock {
    var stream: HTTP2StreamID = 0
    var fields: [HTTPField] = []
    var size = 0
    /// The block went over `maxHeaderListSize` (now or earlier on its
    /// stream): its fields are dropped and the stream is reset when it ends.
    var tooLarge = false
    /// How many fields the last block had: the next one reserves that much.
    private var lastCount = 8

    /// Opens a block on `stream` (0: a stream the session does not track).
    mutating func begin(stream: HTTP2StreamID, tooLarge: Bool) {
        self.stream = stream
        self.tooLarge = tooLarge
        size = 0
        fields = []
        if stream != 0 { fields.reserveCapacity(lastCount) }
    }

    /// The most fields a block over the limit keeps (`keptWhenTooLarge`).
    static let keptLimit = 8

    /// Takes one decoded field of `stream`'s block: appends it, unless the
    /// block is another stream's (or untracked) or over `limit` already.
    /// Returns false when this field took the block over `limit` (its
    /// fields are then dropped, except the few `keptWhenTooLarge` names, so
    /// the refusal can say which request it was; the caller marks the
    /// stream). One call per field, so the session's state is accessed once.
    mutating func append(stream: HTTP2StreamID, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>,
                         limit: Int) -> Bool {
        guard self.stream == stream else { return true }
        size += name.count + value.count + 32
        if tooLarge {
            keepIfNamed(name, value)
            return true
        }
        guard size <= limit else {
            tooLarge = true
            fields.removeAll { !HTTP2HeaderBlock.isKeptWhenTooLarge($0.name) }
            keepIfNamed(name, value)
            return false
        }
        // A common name (most of them) is a `String` made once, not one per field.
        fields.append(HTTPField(name: CommonFieldNames.decoded(name) ?? String(latin1: name), value: String(latin1: value)))
        return true
    }

    /// True for the fields a block over the limit keeps: the pseudo-header
    /// fields (the request's method, scheme, authority, path) and
    /// `intact-trace` (what pairs the refused request with other taps').
    static func isKeptWhenTooLarge(_ name: String) -> Bool {
        name.hasPrefix(":") || name == "intact-trace"
    }

    /// Appends a field of a block over the limit when its name is kept, up to `keptLimit`.
    private mutating func keepIfNamed(_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) {
        guard fields.count < HTTP2HeaderBlock.keptLimit, name.first == UInt8(ascii: ":") || name.count == 12 else { return }
        let text = String(latin1: name)
        guard HTTP2HeaderBlock.isKeptWhenTooLarge(text) else { return }
        fields.append(HTTPField(name: text, value: String(latin1: value)))
    }

    /// Closes the block and hands its fields over (the array moves out; no copy).
    mutating func take() -> [HTTPField] {
        let taken = fields
        fields = []
        stream = 0
        lastCount = max(taken.count, 1)
        return taken
    }
}
