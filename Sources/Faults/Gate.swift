/// A gate in front of the server, as an authenticating gateway does it.
public struct Gate: Sendable, Hashable {
    /// What a request must carry to be forwarded.
    public enum Requirement: Sendable, Hashable {
        case cookie(String)
        case header(String)
    }

    /// What a request without it gets.
    public enum Denial: Sendable, Hashable {
        /// `302 Found` to the gateway's login page.
        case redirect(location: String)
        /// `401 Unauthorized` or `403 Forbidden` with an HTML page.
        case status(Int)
    }

    public var requirement: Requirement
    public var denial: Denial

    public init(requirement: Requirement, denial: Denial) {
        self.requirement = requirement
        self.denial = denial
    }

    /// The gateway's answer to a request that does not pass.
    var denialResponse: CannedResponse {
        switch denial {
        case .redirect(let location):
            return CannedResponse(status: 302, fields: [("Location", location)],
                                  html: "Sign in at the gateway", detail: "Continue at \(location).")
        case .status(let status):
            return CannedResponse(status: status, fields: [],
                                  html: status == 401 ? "Gateway authentication required" : "Access denied by the gateway",
                                  detail: "The request did not carry the gateway's credentials.")
        }
    }
}
