import Wire

/// Carries a value that is not `Sendable` (a handler closure, a loop-confined
/// object) through a `@Sendable` closure that runs on the same loop.
///
/// `@unchecked Sendable`: made on `loop` and unwrapped only on `loop`
/// (`value` checks it), so the value never crosses threads.
struct LoopBound<Value>: @unchecked Sendable {
    private let wrapped: Value
    private let loop: EventLoop

    init(_ value: Value, on loop: EventLoop) {
        loop.preconditionOnLoop()
        self.wrapped = value
        self.loop = loop
    }

    var value: Value {
        loop.preconditionOnLoop()
        return wrapped
    }
}
