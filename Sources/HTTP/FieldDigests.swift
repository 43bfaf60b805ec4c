import Hashing

/// The per-field digests of a head (`HeadDigest.fields`): one digest per
/// lowercased field name, held as one array sorted by name, so a head builds
/// it with one allocation and the recording line writes it in name order with
/// none (a dictionary needs its keys sorted into a new array every time).
///
/// Reads like the dictionary it stands for: `fields[name]`, `keys`,
/// iteration as `(key, value)` pairs (in name order). `Codable` as a
/// `[String: SHA256Digest]`, so recordings keep the same JSON object.
///
/// Invariant: `entries` is sorted by name (`String` order, which is byte
/// order for the ASCII names heads carry) and holds each name once.
public struct FieldDigests: Hashable, Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: SHA256Digest)

    private(set) var entries: [Element] = []

    public init() {}

    /// Room for `capacity` names without growing.
    public init(minimumCapacity capacity: Int) {
        entries.reserveCapacity(capacity)
    }

    /// Takes entries already in name order, each name once, as a head's
    /// grouping produces them (`FieldNameIndex`) when `byteOrderIsNameOrder`
    /// (ISO-8859-1 names: their byte order is `String` order); otherwise
    /// inserts them one by one, which sorts them.
    init(sortedByName sorted: [Element], byteOrderIsNameOrder: Bool) {
        guard byteOrderIsNameOrder else {
            self.init(minimumCapacity: sorted.count)
            for entry in sorted { self[entry.key] = entry.value }
            return
        }
        assert(zip(sorted, sorted.dropFirst()).allSatisfy { $0.key < $1.key }, "field digests out of name order")
        self.init()
        entries = sorted
    }

    public init(_ dictionary: [String: SHA256Digest]) {
        entries = dictionary.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }
    }

    public init(dictionaryLiteral elements: (String, SHA256Digest)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// The digest of a lowercased name; setting one keeps the order
    /// (replaces the name's digest if it has one, nil removes it).
    public subscript(name: String) -> SHA256Digest? {
        get {
            let index = position(of: name)
            return index < entries.count && entries[index].key == name ? entries[index].value : nil
        }
        set {
            let index = position(of: name)
            let present = index < entries.count && entries[index].key == name
            switch (present, newValue) {
            case (true, let digest?): entries[index].value = digest
            case (true, nil): entries.remove(at: index)
            case (false, let digest?): entries.insert((key: name, value: digest), at: index)
            case (false, nil): break
            }
        }
    }

    /// The names, in order.
    public var keys: [String] { entries.map(\.key) }
    /// The digests, in name order.
    public var values: [SHA256Digest] { entries.map(\.value) }
    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }

    /// The same digests as a dictionary.
    public var dictionary: [String: SHA256Digest] {
        Dictionary(uniqueKeysWithValues: entries.lazy.map { ($0.key, $0.value) })
    }

    public func makeIterator() -> IndexingIterator<[Element]> { entries.makeIterator() }

    /// The first index whose name is not below `name` (binary search).
    private func position(of name: String) -> Int {
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].key < name { low = middle + 1 } else { high = middle }
        }
        return low
    }

    public static func == (a: FieldDigests, b: FieldDigests) -> Bool {
        a.entries.elementsEqual(b.entries) { $0.key == $1.key && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(entries.count)
        for entry in entries {
            hasher.combine(entry.key)
            hasher.combine(entry.value)
        }
    }
}

extension FieldDigests: Codable {
    public init(from decoder: Decoder) throws {
        self.init(try [String: SHA256Digest](from: decoder))
    }

    public func encode(to encoder: Encoder) throws {
        try dictionary.encode(to: encoder)
    }
}
