internal import COpenSSL

/// One entry of OpenSSL's per-thread error queue, copied out as values.
struct OpenSSLErrorEntry: Sendable, Hashable {
    /// The packed error code (`ERR_get_error_all`).
    let code: UInt
    /// `ERR_GET_LIB` of the code, e.g. `ERR_LIB_SSL`.
    let library: Int32
    /// `ERR_GET_REASON` of the code, e.g. `SSL_R_HTTP_REQUEST`.
    let reason: Int32
    /// `ERR_reason_error_string`, e.g. "peer did not return a certificate".
    let reasonText: String
    /// Extra data some errors carry (for example "SSL alert number 116").
    let data: String?
}

/// Access to OpenSSL's per-thread error queue.
///
/// Every OpenSSL call Intact makes runs inside `OpenSSLErrorQueue.run`: the
/// queue is empty before it (cleared if anything was left), so what is read
/// afterwards belongs to that call and not to an earlier, unrelated failure
/// on the same thread, and `SSL_get_error` (which reads the queue) is
/// reliable. Both steps happen within one synchronous call, so no other work
/// can interleave on this thread.
enum OpenSSLErrorQueue {
    /// Makes sure the queue is empty, runs `body`, and returns its result with
    /// the errors it left (taking them off: the queue is empty again after).
    ///
    /// Usually nothing is left (`drain` empties the queue after every call),
    /// so the queue is only peeked at: `ERR_clear_error` resets all sixteen
    /// slots whatever they hold, about 840 instructions against 200 for the
    /// peek; a proxied request makes seven calls (−4.4k instructions).
    static func run<Result>(_ body: () -> Result) -> (result: Result, errors: [OpenSSLErrorEntry]) {
        run(body, drainingAfter: { _ in true })
    }

    /// `run` for the calls of the data path (`SSL_read_ex`, `SSL_write_ex`),
    /// whose result says whether they failed: the queue is drained only
    /// after a failure (`failed`), the only case in which a caller reads
    /// what the call left. After a success nothing is taken off; whatever
    /// OpenSSL may have left is cleared by the check before the next call,
    /// which every call makes. One look at the thread's queue per call
    /// instead of two (about 160 instructions each; four such calls per
    /// proxied request).
    static func run<Result>(_ body: () -> Result,
                            drainingAfter failed: (Result) -> Bool) -> (result: Result, errors: [OpenSSLErrorEntry]) {
        if ERR_peek_error() != 0 { ERR_clear_error() }
        let result = body()
        return (result, failed(result) ? drain() : [])
    }

    /// Removes and returns every entry on the queue, oldest first.
    static func drain() -> [OpenSSLErrorEntry] {
        var entries: [OpenSSLErrorEntry] = []
        while true {
            var data: UnsafePointer<CChar>?
            var flags: Int32 = 0
            let code = ERR_get_error_all(nil, nil, nil, &data, &flags)
            if code == 0 { break }
            let reasonText = ERR_reason_error_string(code).map { String(cString: $0) } ?? "error \(ERR_GET_REASON(code))"
            var extra: String?
            if flags & ERR_TXT_STRING != 0, let data, data.pointee != 0 {
                extra = String(cString: data)
            }
            entries.append(OpenSSLErrorEntry(code: code, library: ERR_GET_LIB(code), reason: ERR_GET_REASON(code),
                                             reasonText: reasonText, data: extra))
        }
        return entries
    }

    /// A one-line summary of entries for error explanations ("reason; reason").
    static func summary(_ entries: [OpenSSLErrorEntry]) -> String? {
        guard !entries.isEmpty else { return nil }
        return entries.map { entry in
            entry.data.map { "\(entry.reasonText) (\($0))" } ?? entry.reasonText
        }.joined(separator: "; ")
    }
}
