import Wire

extension ProxyError {
    /// Opening a TCP connection to `target` failed.
    static func connect(_ error: WireError, to target: UpstreamTarget, at location: Place = .upstreamConnect) -> ProxyError {
        connectError(error, message: "connecting to \(target.authority) failed: \(error)", at: location)
    }

    /// A connect failure with its message, mapped by what went wrong.
    static func connectError(_ error: WireError, message: String, at location: Place) -> ProxyError {
        switch error {
        case .connectionRefused:
            return ProxyError(.connectionRefused, at: location, message, status: .connectionRefused)
        case .unreachable:
            return ProxyError(.connectionRefused, at: location, message, status: .destinationNotFound)
        case .nameNotFound, .invalidHostName, .resolutionFailed:
            return ProxyError(.resolution, at: location, message, status: .dnsError)
        case .timedOut:
            return ProxyError(.timeout, at: location, message, status: .connectionTimeout)
        case .connectionReset, .brokenPipe:
            return ProxyError(.reset, at: location, message, status: .connectionTerminated)
        case .addressInUse, .addressNotAvailable, .notListening, .system:
            return ProxyError(.internal, at: location, message, status: .proxyInternalError)
        }
    }
}
