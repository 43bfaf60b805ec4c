import AuthFlow
import Evidence
import Faults
import Foundation
import HTTP
import Proxy
import TLS

/// The fault engine as a proxy add-on: each exchange runs through one
/// `ExchangeFaults` (its hook), each client connection gets the engine's
/// TLS faults, and every fault applied is written into the record of its
/// exchange (connection faults into every record of the connection), so
/// recordings and the verifier's reports show what was injected on purpose.
///
/// The rules' step criteria see the request classified by the sign-in
/// flow's `StepClassifier`, and response-leg rules the step with the
/// response known (`ExchangeContext`).
public struct FaultsAddon: ProxyAddon {
    public let engine: FaultEngine
    let classifier: StepClassifier
    /// The PEM of every `caFile` a client-certificate rule names, read when the add-on was made.
    private let clientCertificateRoots: [String: [UInt8]]
    private let hasMessageRules: Bool
    private let hasConnectionRules: Bool

    /// Reads the CA files client-certificate rules name (so no file is read
    /// on an event loop). Blocks on disk I/O.
    /// - Parameter contextPath: the sign-in flow's context path, for step matching.
    public init(engine: FaultEngine, contextPath: String = "suite") throws(FaultsAddonError) {
        self.engine = engine
        classifier = StepClassifier(contextPath: contextPath)
        hasMessageRules = engine.rules.contains { !$0.isConnectionRule }
        hasConnectionRules = engine.rules.contains(where: \.isConnectionRule)
        var roots: [String: [UInt8]] = [:]
        for rule in engine.rules {
            for case .requireClientCertificate(let file?) in rule.actions where roots[file] == nil {
                guard let data = FileManager.default.contents(atPath: file) else {
                    throw FaultsAddonError(rule: rule.name, file: file, reason: "cannot read the file")
                }
                guard String(decoding: data, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
                    throw FaultsAddonError(rule: rule.name, file: file, reason: "no PEM certificate in it")
                }
                roots[file] = Array(data)
            }
        }
        clientCertificateRoots = roots
    }

    public func hook(for exchange: ExchangeHookContext) -> (any ExchangeHook)? {
        guard hasMessageRules else { return nil }
        return FaultsHook(engine.begin(ExchangeContext(request: exchange.request, classifier: classifier)))
    }

    public func connectionAccepted(_ connection: ConnectionID) -> ConnectionDirectives {
        guard hasConnectionRules else { return ConnectionDirectives() }
        let faults = engine.beginConnection()
        var changes = DownstreamTLSChanges()
        for command in faults.tls {
            switch command {
            case .requireClientCertificate(let file):
                changes.requiredClientCertificate = file.flatMap { clientCertificateRoots[$0] }
                    .map { .roots(.caPEM($0)) } ?? .proxyAuthority
            case .presentUnknownCA:
                changes.presentsUntrustedCertificate = true
            }
        }
        return ConnectionDirectives(tls: changes, faults: faults.applied.map(ExchangeRecord.RecordedFault.init))
    }

    public var mayPresentUntrustedCertificates: Bool {
        engine.rules.contains { $0.actions.contains(.presentUnknownCA) }
    }

    /// The recording header names the rules and the seed, so a recording
    /// says which faults were injected on purpose.
    public var recordedOptions: [String: String] {
        ["faults": engine.rules.map(\.name).joined(separator: ","), "faultSeed": String(engine.seed)]
    }
}

/// A CA file a client-certificate rule names could not be used.
public struct FaultsAddonError: Error, Sendable, Hashable, CustomStringConvertible {
    public var rule: String
    public var file: String
    public var reason: String

    public var description: String { "fault rule \"\(rule)\": CA file \(file): \(reason)" }
}

/// `FaultsAddon`'s hook for one exchange: the engine's outputs as hook outputs.
final class FaultsHook: ExchangeHook {
    private var faults: ExchangeFaults

    init(_ faults: ExchangeFaults) {
        self.faults = faults
    }

    public func request(_ part: HTTPRequestPart) -> [HookOutput<HTTPRequestPart>] {
        faults.request(part).map(HookOutput.init)
    }

    public func response(_ part: HTTPResponsePart) -> [HookOutput<HTTPResponsePart>] {
        faults.response(part).map(HookOutput.init)
    }

    public func finish(_ record: inout ExchangeRecord) {
        record.faults += faults.applied.map(ExchangeRecord.RecordedFault.init)
    }
}

extension HookOutput {
    /// What the proxy does for one output of the fault engine.
    init(_ output: FaultOutput<Part>) {
        switch output {
        case .forward(let part): self = .forward(part)
        case .answer(let parts): self = .answer(parts)
        case .fail(let failure): self = .fail(reason: "fault \(failure)")
        case .network(.delay(let duration)): self = .delay(duration)
        case .network(.throttle(let rate)): self = .throttle(bytesPerSecond: rate)
        case .network(.reset(let point)): self = .reset(reason: "connection reset by a fault \(point)")
        case .network(.closeSilently): self = .close(reason: "connection closed by a fault without an answer")
        case .network(.stall): self = .stall(reason: "stalled by a fault: no answer, the connection left open")
        }
    }
}

extension ExchangeRecord.RecordedFault {
    /// A fault as records carry it: the rule's name, and what its action did where.
    init(_ fault: Faults.AppliedFault) {
        self.init(name: fault.rule, detail: "\(fault.action) on the \(fault.leg?.rawValue ?? "connection"): \(fault.change)")
    }
}
