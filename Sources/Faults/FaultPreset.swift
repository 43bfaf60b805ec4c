import AuthFlow
/// A named fault (`--fault NAME:key=value,...`) made of ordinary rules, with
/// what `intact faults` shows about it: what it does, the document sentences
/// it breaks, what the client sees.
public struct FaultPreset: Sendable {
    public let name: String
    /// What it does.
    public let summary: String
    /// Where in the document: "steps 3–4", "Network Requirements".
    public let reference: String
    /// The document's sentences it breaks, verbatim (empty for resilience presets).
    public let breaks: [DocumentSentence]
    /// What the client sees.
    public let clientSees: String
    public let parameters: [FaultPresetParameter]
    private let build: @Sendable (FaultPresetArguments) throws(FaultPresetError) -> [FaultRule]

    init(name: String, summary: String, reference: String, breaks: [DocumentSentence], clientSees: String,
         parameters: [FaultPresetParameter] = [],
         build: @escaping @Sendable (FaultPresetArguments) throws(FaultPresetError) -> [FaultRule]) {
        self.name = name
        self.summary = summary
        self.reference = reference
        self.breaks = breaks
        self.clientSees = clientSees
        self.parameters = parameters
        self.build = build
    }

    /// The preset's rules with these parameter values (defaults for the others).
    public func rules(_ arguments: [String: String] = [:]) throws(FaultPresetError) -> [FaultRule] {
        if let unknown = arguments.keys.sorted().first(where: { key in !parameters.contains { $0.name == key } }) {
            throw .unknownParameter(preset: name, parameter: unknown, allowed: parameters.map(\.name))
        }
        return try build(FaultPresetArguments(preset: self, values: arguments))
    }

    /// The preset called `name`.
    public static func named(_ name: String) throws(FaultPresetError) -> FaultPreset {
        guard let preset = catalog.first(where: { $0.name == name }) else {
            throw .unknownPreset(name, known: catalog.map(\.name))
        }
        return preset
    }

    /// The rules of a `--fault` value: `NAME` or `NAME:key=value,key=value`.
    public static func rules(specification: String) throws(FaultPresetError) -> [FaultRule] {
        let (name, rest) = specification.firstIndex(of: ":").map {
            (String(specification[..<$0]), String(specification[specification.index(after: $0)...]))
        } ?? (specification, "")
        let preset = try named(name)
        var arguments: [String: String] = [:]
        for pair in rest.split(separator: ",", omittingEmptySubsequences: false) where !rest.isEmpty {
            guard let eq = pair.firstIndex(of: "="), eq != pair.startIndex else {
                throw .malformed(specification, reason: "\"\(pair)\" is not key=value")
            }
            let key = String(pair[..<eq])
            guard arguments[key] == nil else { throw .malformed(specification, reason: "\"\(key)\" is given twice") }
            arguments[key] = String(pair[pair.index(after: eq)...])
        }
        return try preset.rules(arguments)
    }
}

/// One parameter of a preset.
public struct FaultPresetParameter: Sendable, Hashable {
    public let name: String
    /// The value used when the parameter is not given, or nil when it has none.
    public let defaultValue: String?
    public let meaning: String
}

/// Why a `--fault` value was refused.
public enum FaultPresetError: Error, Sendable, Hashable, CustomStringConvertible {
    case unknownPreset(String, known: [String])
    case unknownParameter(preset: String, parameter: String, allowed: [String])
    case invalidValue(preset: String, parameter: String, value: String, reason: String)
    case malformed(String, reason: String)

    public var description: String {
        switch self {
        case .unknownPreset(let name, let known):
            return "unknown fault preset \"\(name)\"; known presets: \(known.joined(separator: ", "))"
        case .unknownParameter(let preset, let parameter, let allowed):
            return "fault preset \(preset) has no parameter \"\(parameter)\"" +
                (allowed.isEmpty ? " (it takes none)" : "; its parameters: \(allowed.joined(separator: ", "))")
        case .invalidValue(let preset, let parameter, let value, let reason):
            return "fault preset \(preset): \(parameter)=\(value): \(reason)"
        case .malformed(let spec, let reason):
            return "fault \"\(spec)\" is not NAME or NAME:key=value,...: \(reason)"
        }
    }
}

/// A preset's parameter values, read with the checks each needs.
struct FaultPresetArguments {
    let preset: FaultPreset
    let values: [String: String]

    private func raw(_ name: String) -> String {
        // Every preset reads only its declared parameters, and each has a default or is given.
        values[name] ?? preset.parameters.first { $0.name == name }?.defaultValue ?? ""
    }

    private func invalid(_ name: String, _ reason: String) -> FaultPresetError {
        .invalidValue(preset: preset.name, parameter: name, value: raw(name), reason: reason)
    }

    func string(_ name: String) throws(FaultPresetError) -> String {
        let v = raw(name)
        guard !v.isEmpty else { throw invalid(name, "needs a value") }
        return v
    }

    /// Nil when the parameter is not given and has no default.
    func optionalString(_ name: String) -> String? {
        let v = raw(name)
        return v.isEmpty ? nil : v
    }

    func int(_ name: String, in range: ClosedRange<Int>) throws(FaultPresetError) -> Int {
        guard let n = Int(raw(name)), range.contains(n) else {
            throw invalid(name, "expected a whole number in \(range.lowerBound)…\(range.upperBound == Int.max ? "" : String(range.upperBound))")
        }
        return n
    }

    func choice<E: RawRepresentable & CaseIterable>(_ name: String, _ type: E.Type) throws(FaultPresetError) -> E where E.RawValue == String {
        guard let e = E(rawValue: raw(name)) else {
            throw invalid(name, "one of \(E.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return e
    }

    func regex(_ pattern: String, for name: String) throws(FaultPresetError) -> CompiledRegex {
        do throws(InvalidRegex) {
            return try CompiledRegex(pattern)
        } catch {
            throw invalid(name, error.reason)
        }
    }
}
