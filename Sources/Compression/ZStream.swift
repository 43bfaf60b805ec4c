import CZlib

/// One zlib stream (deflate or inflate side), owned by one `Compressor` or
/// `Decompressor`. The `z_stream` lives on the heap because zlib keeps a
/// pointer back to it: it must never move while the stream is open.
/// Not thread-safe: one owner at a time.
final class ZStream {
    enum Side { case deflate, inflate }

    let side: Side
    let pointer: UnsafeMutablePointer<z_stream>

    /// Opens the stream; `open` is deflateInit2 or inflateInit2 through the shim.
    init(side: Side, open: (UnsafeMutablePointer<z_stream>) -> Int32) throws(CompressionError) {
        self.side = side
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: z_stream())
        let status = open(pointer)
        guard status == Z_OK else {
            pointer.deinitialize(count: 1)
            pointer.deallocate()
            throw status == Z_MEM_ERROR ? .outOfMemory : .misuse("zlib refused to open a stream (\(status))")
        }
    }

    deinit {
        switch side {
        case .deflate: deflateEnd(pointer)
        case .inflate: inflateEnd(pointer)
        }
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }

    /// zlib's message for the last error, if it left one.
    var message: String? {
        pointer.pointee.msg.map { String(cString: $0) }
    }

    /// Feeds `input` and calls `step` (deflate or inflate) until it has
    /// consumed everything and has no more output to give, appending the
    /// output to the result. Before each call the output window is
    /// at most `capacity(producedSoFar)` bytes; it stops when that is 0. `step` returns whether
    /// to go on after looking at zlib's status; it may throw to stop.
    /// Returns the output and how many input bytes were consumed.
    func pump(_ input: [UInt8], capacity: (Int) -> Int,
              step: (UnsafeMutablePointer<z_stream>) throws(CompressionError) -> Bool)
        throws(CompressionError) -> (output: [UInt8], consumed: Int) {
        var output: [UInt8] = []
        var window = [UInt8](repeating: 0, count: 16 * 1024)
        var consumed = 0
        var failure: CompressionError?
        input.withUnsafeBufferPointer { inputBuffer in
            pointer.pointee.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress)
            pointer.pointee.avail_in = UInt32(inputBuffer.count)
            defer {
                consumed = inputBuffer.count - Int(pointer.pointee.avail_in)
                pointer.pointee.next_in = nil
                pointer.pointee.avail_in = 0
            }
            while true {
                let allowed = capacity(output.count)
                guard allowed > 0 else { return }
                let size = min(window.count, allowed)
                let goOn: Bool
                let produced: Int
                do {
                    (goOn, produced) = try window.withUnsafeMutableBufferPointer { (buffer) throws(CompressionError) in
                        pointer.pointee.next_out = buffer.baseAddress
                        pointer.pointee.avail_out = UInt32(size)
                        defer { pointer.pointee.next_out = nil }
                        let goOn = try step(pointer)
                        return (goOn, size - Int(pointer.pointee.avail_out))
                    }
                } catch {
                    failure = error as? CompressionError ?? .misuse("\(error)")  // step throws only CompressionError
                    return
                }
                output += window[..<produced]
                let windowFilled = produced == size
                guard goOn, pointer.pointee.avail_in > 0 || windowFilled else { return }
            }
        }
        if let failure { throw failure }
        return (output, consumed)
    }
}
