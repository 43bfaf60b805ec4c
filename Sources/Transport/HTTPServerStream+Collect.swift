import HTTP

extension HTTPServerStream {
    /// Installs a handler that gathers the request body (up to `limit`
    /// bytes) and calls `completion` once with it and the trailers, or with
    /// the failure; past `limit` it completes with `.invalidState` and the
    /// owner decides (answer 413, reset). For small bodies (forms, JSON); stream anything larger. Called only on the loop.
    public func collectBody(limit: Int = 1 << 20,
                            _ completion: @escaping (Result<(body: [UInt8], trailers: HTTPFields?), TransportError>) -> Void) {
        var body: [UInt8] = []
        var done = false
        setHandler { event in
            guard !done else { return }
            switch event {
            case .body(let bytes):
                body += bytes
                if body.count > limit {
                    done = true
                    completion(.failure(.invalidState("request body larger than \(limit) bytes")))
                }
            case .end(let trailers):
                done = true
                completion(.success((body, trailers)))
            case .failed(let error):
                done = true
                completion(.failure(error))
            case .interimResponse, .response, .writable:
                break
            }
        }
    }
}
