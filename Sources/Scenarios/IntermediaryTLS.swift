import Evidence
import Foundation
import TLS

/// How TLS crossed a forward intermediary, as the run shows it: whether
/// the TLS session tap A opened upstream ended at tap B (a blind tunnel) or
/// at the intermediary, which re-originated another session to tap B with
/// a certificate it minted (TLS inspection, Squid's ssl-bump).
public enum IntermediaryTLS: Hashable, Sendable, CustomStringConvertible {
    /// Tap A checked every upstream certificate against the run's CA alone,
    /// whose key no intermediary holds: the sessions were tap B's.
    case tunnel(product: String, certificates: Int)
    /// Tap A was handed certificates the product minted (found among those
    /// it stores), issued by its own CA: each session ended at the product.
    case reoriginated(product: String, minted: Int, certificates: Int)
    /// Some upstream certificates were the product's and others not.
    case mixed(product: String, minted: Int, certificates: Int)

    public var description: String {
        switch self {
        case let .tunnel(product, sessions):
            return "blind tunnel: \(product) relayed tap A's TLS to tap B unopened (tap A checked \(sessions) upstream "
                + "certificate\(sessions == 1 ? "" : "s") against the run's CA alone, which \(product) cannot sign for)"
        case let .reoriginated(product, minted, sessions):
            return "re-originated TLS: \(product) terminated tap A's TLS with \(minted) certificate\(minted == 1 ? "" : "s") "
                + "it minted from its own CA and opened its own TLS to tap B: the server's side sees \(product)'s TLS "
                + "session, not the app's, and no client certificate of the app can cross it"
        case let .mixed(product, minted, sessions):
            return "mixed: \(minted) of the \(sessions) upstream certificates tap A got were minted by \(product) "
                + "(re-originated TLS), the others came through unopened"
        }
    }

    /// What tap A's recording shows for a forward `plan`; nil for a reverse
    /// one or when tap A recorded no upstream TLS session.
    public static func observe(plan: ScenarioPlan, tapA: Recording) -> IntermediaryTLS? {
        let kind = plan.scenario.intermediary
        guard kind.topology == .forward else { return nil }
        let seen = Set(tapA.records.flatMap(\.legs).filter { $0.role == .upstream }
            .compactMap { $0.tls?.peerCertificateSHA256 })
        guard !seen.isEmpty else { return nil }
        let minted = mintedFingerprints(plan)
        let bumped = seen.intersection(minted).count
        if bumped == 0 { return .tunnel(product: kind.displayName, certificates: seen.count) }
        if bumped == seen.count { return .reoriginated(product: kind.displayName, minted: bumped, certificates: seen.count) }
        return .mixed(product: kind.displayName, minted: bumped, certificates: seen.count)
    }

    /// The SHA-256 fingerprints of the certificates the product stored as minted.
    private static func mintedFingerprints(_ plan: ScenarioPlan) -> Set<String> {
        guard let template = plan.scenario.intermediary.mintedCertificates,
              let directory = try? ConfigTemplate(file: "", text: template).render(plan.placeholderValues),
              let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var fingerprints = Set<String>()
        for name in names {
            guard let data = FileManager.default.contents(atPath: directory + "/" + name),
                  let certificates = try? TLSCertificate.certificates(pem: [UInt8](data)) else { continue }
            for certificate in certificates { fingerprints.insert(certificate.sha256Fingerprint) }
        }
        return fingerprints
    }
}
