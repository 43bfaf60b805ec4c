import HTTP

extension HTTPRequestHead {
    /// The target's query without `?` (empty when there is none).
    var queryString: String {
        guard let q = path.firstIndex(of: "?") else { return "" }
        return String(path[path.index(after: q)...])
    }
}
