import Hashing

/// Writes compact JSON (RFC 8259) straight into a byte buffer: the encoder of
/// recording lines, which sit on the hot path of every recorded exchange
/// (why not `JSONEncoder`, and what each trick below bought:
/// Docs/performance.md#the-recording-line).
///
/// The output is what `JSONDecoder` reads back to the same values:
/// - strings: `"` and `\` escaped, control characters below U+0020 as `\n`,
///   `\r`, `\t`, `\b`, `\f` or `\u00XX`; everything else, `/` and non-ASCII
///   included, as its UTF-8 bytes;
/// - integers in decimal; finite doubles that are exact thousandths (clock
///   timestamps in milliseconds, see `Timestamp`) as digits with one to
///   three decimals (`1700000000000.5`), other finite doubles in Swift's
///   shortest round-trip form (`1e-05`), non-finite ones as the strings
///   `"Infinity"`, `"-Infinity"`, `"NaN"` (what the recording decoder is told
///   to accept);
/// - absent optionals are left out (as `encodeIfPresent` does).
///
/// The caller writes keys and values in pairs inside `object`/`array`; the
/// writer inserts the commas. Invariant: `needsComma` is true exactly when
/// the innermost open container already holds a member.
///
/// The bytes go into one buffer the writer owns (noncopyable, freed in
/// `deinit`): each value reserves room once and stores its bytes through a
/// pointer, so a line of a few kilobytes costs no per-byte bounds, capacity
/// or uniqueness checks. Invariant: `0 <= used <= capacity`, and the first
/// `used` bytes of `base` are the output.
///
/// The members every value goes through (`reserve`, `put`, `key` with a
/// literal, the containers, `member`) are `@inlinable`.
///
/// Contract of the value writers that stay out of line (`string`, `int`,
/// `double`, `bool`, `hex`, `key(escaping:)`, the arrays): they are
/// `@_effects(releasenone)` and must stay true to it, releasing nothing
/// their caller holds (they free only temporaries of their own, such as a
/// double's `description`).
public struct JSONWriter: ~Copyable {
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @usableFromInline var capacity: Int
    @usableFromInline var used = 0
    @usableFromInline var needsComma = false

    /// How many bytes have been written.
    public var count: Int { used }

    public init(capacity: Int = 1024) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deallocate()
    }

    /// The bytes written so far, copied into an array.
    public var bytes: [UInt8] {
        Array(UnsafeBufferPointer(start: base, count: used))
    }

    /// Appends the bytes written so far to `array` (one copy).
    public func append(to array: inout [UInt8]) {
        array.append(contentsOf: UnsafeBufferPointer(start: base, count: used))
    }

    /// Lends the bytes written so far to `body`; the pointer must not escape.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: used))
    }

    /// Ends a line: writes `\n` and starts the next value afresh (no comma
    /// before it), so one writer can hold many JSON Lines one after another.
    @inlinable
    public mutating func endLine() {
        reserve(1)
        put(UInt8(ascii: "\n"))
        needsComma = false
    }

    /// Forgets everything written, keeping the buffer for the next lines.
    public mutating func removeAll() {
        used = 0
        needsComma = false
    }


    // MARK: Containers

    /// Writes `{`, the members `body` writes, then `}`.
    @inlinable @inline(__always)
    public mutating func object(_ body: (inout JSONWriter) -> Void) {
        container(open: UInt8(ascii: "{"), close: UInt8(ascii: "}"), body)
    }

    /// Writes `[`, the elements `body` writes, then `]`.
    @inlinable @inline(__always)
    public mutating func array(_ body: (inout JSONWriter) -> Void) {
        container(open: UInt8(ascii: "["), close: UInt8(ascii: "]"), body)
    }

    @inlinable @inline(__always)
    mutating func container(open: UInt8, close: UInt8, _ body: (inout JSONWriter) -> Void) {
        opening(open)
        body(&self)
        closing(close)
    }

    /// Writes `{`: the members written next are the object's, up to the
    /// `closeObject()` that pairs with it. What the encoders of records use
    /// instead of `object(_:)`, so that no closure (and nothing it would
    /// capture) stands between a value and the writer.
    @inlinable @inline(__always)
    public mutating func openObject() {
        opening(UInt8(ascii: "{"))
    }

    /// Writes `}`, closing the innermost open object.
    @inlinable @inline(__always)
    public mutating func closeObject() {
        closing(UInt8(ascii: "}"))
    }

    /// Writes `[`: the values written next are the array's, up to the
    /// `closeArray()` that pairs with it.
    @inlinable @inline(__always)
    public mutating func openArray() {
        opening(UInt8(ascii: "["))
    }

    /// Writes `]`, closing the innermost open array.
    @inlinable @inline(__always)
    public mutating func closeArray() {
        closing(UInt8(ascii: "]"))
    }

    @inlinable @inline(__always)
    mutating func opening(_ bracket: UInt8) {
        reserve(2)
        separate()
        put(bracket)
        needsComma = false
    }

    @inlinable @inline(__always)
    mutating func closing(_ bracket: UInt8) {
        reserve(1)
        put(bracket)
        needsComma = true
    }

    /// An array of strings.
    @_effects(releasenone)
    public mutating func array(_ strings: [String]) {
        openArray()
        for index in strings.indices { string(strings[index]) }
        closeArray()
    }

    /// An array of integers.
    @_effects(releasenone)
    public mutating func array(_ values: [Int]) {
        openArray()
        for index in values.indices { int(values[index]) }
        closeArray()
    }

    /// Writes a member's key; the next value written is its value. The
    /// literal is written as it is: it must need no escape (a name, as
    /// every key of the recording format is). A key that is not a literal
    /// goes through `key(escaping:)`, never through this one, so that a
    /// string literal here is never taken for a `String` (which Swift
    /// prefers when both overloads exist) and escaped byte by byte.
    @inlinable @inline(__always)
    public mutating func key(_ key: StaticString) {
        assert(!JSONWriter.anyNeedsEscape(UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)),
               "a literal key that needs an escape")
        let length = key.utf8CodeUnitCount
        reserve(length + 4)
        separate()
        put(UInt8(ascii: "\""))
        appendVerbatim(key.utf8Start, count: length)
        put(UInt8(ascii: "\""))
        put(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Writes a member's key that is not a literal (a dictionary key), escaped.
    @_effects(releasenone)
    public mutating func key(escaping key: String) {
        string(key)
        reserve(1)
        put(UInt8(ascii: ":"))
        needsComma = false
    }

    // MARK: Values

    @_effects(releasenone)
    public mutating func string(_ value: String) {
        // Native strings lend their UTF-8 in place; others are made native once.
        let done: Void? = value.utf8.withContiguousStorageIfAvailable { quoted($0) }
        if done == nil {
            var native = value
            native.withUTF8 { quoted($0) }
        }
        needsComma = true
    }

    /// `"`, the escaped text, `"`. Most strings of a record (names, field
    /// values, versions) need no escape: they are checked and copied in one
    /// pass (`appendIfClean`); the others go through `appendEscaped`.
    private mutating func quoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        reserve(utf8.count &+ 3)
        separate()
        put(UInt8(ascii: "\""))
        if !appendIfClean(utf8) {
            appendEscaped(utf8)
            reserve(1)
        }
        put(UInt8(ascii: "\""))
    }

    /// A digest as 64 lowercase hexadecimal digits, straight from its inline
    /// bytes: sixteen bytes at a time with vector arithmetic (`hexDigits`),
    /// no loop, no table, no intermediate `String`.
    @_effects(releasenone)
    public mutating func hex(_ digest: SHA256Digest) {
        reserve(67)
        separate()
        put(UInt8(ascii: "\""))
        let (first, second) = digest.withUnsafeBytes { bytes in
            (bytes.loadUnaligned(as: SIMD16<UInt8>.self),
             bytes.loadUnaligned(fromByteOffset: 16, as: SIMD16<UInt8>.self))
        }
        let out = UnsafeMutableRawPointer(base + used)
        out.storeBytes(of: JSONWriter.hexDigits(first), as: SIMD16<UInt16>.self)
        out.storeBytes(of: JSONWriter.hexDigits(second), toByteOffset: 32, as: SIMD16<UInt16>.self)
        used &+= 64
        put(UInt8(ascii: "\""))
        needsComma = true
    }

    /// The 32 lowercase hexadecimal digits of 16 bytes, in memory order:
    /// each byte widened to a 16-bit lane that holds its high nibble in the
    /// lane's first byte in memory and its low nibble in the second, then
    /// every nibble `n` made `"0" + n`, plus 39 (from `:` to `a`) when
    /// `n > 9` — `n + 6` carries into bit 4 exactly then, and no lane
    /// carries into its neighbour (nibbles stay below 16, digits below 128).
    @inline(__always)
    private static func hexDigits(_ bytes: SIMD16<UInt8>) -> SIMD16<UInt16> {
        let wide = SIMD16<UInt16>(truncatingIfNeeded: bytes)
        #if _endian(little)
        let nibbles = (wide &>> 4) | ((wide & 0x0f) &<< 8)
        #else
        let nibbles = ((wide &>> 4) &<< 8) | (wide & 0x0f)
        #endif
        let letters = ((nibbles &+ 0x0606) &>> 4) & 0x0101
        return nibbles &+ 0x3030 &+ letters &* 39
    }

    /// The lowercase hexadecimal digit of a nibble (0...15), for `\u00XX`.
    /// Branch-free: 39 more for the nibbles 10...15 (from `:` to `a`).
    @inline(__always)
    private static func hexDigit(_ nibble: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: 48 &+ nibble &+ ((9 &- nibble) &>> 63 & 39))
    }

    @_effects(releasenone)
    public mutating func int(_ value: Int) {
        reserve(21)
        separate()
        if value < 0 { put(UInt8(ascii: "-")) }
        putDigits(value.magnitude)
        needsComma = true
    }

    /// The decimal digits of `value` (needs 20 bytes of reserved room),
    /// stored in place from the last one (`digitCount` says where that goes):
    /// four at a time — one division by 10 000, the four digits split into
    /// two pairs in 32-bit arithmetic — then the one to four left.
    private mutating func putDigits(_ value: UInt) {
        let count = JSONWriter.digitCount(value)
        let out = UnsafeMutableRawPointer(base + used)
        var end = count
        var magnitude = value
        while magnitude >= 10_000 {
            let quotient = magnitude / 10_000
            let four = UInt32(truncatingIfNeeded: magnitude &- quotient &* 10_000)
            let high = four / 100
            end &-= 4
            out.storeBytes(of: JSONWriter.twoDigits(UInt(high)), toByteOffset: end, as: UInt16.self)
            out.storeBytes(of: JSONWriter.twoDigits(UInt(four &- high &* 100)), toByteOffset: end &+ 2, as: UInt16.self)
            magnitude = quotient
        }
        if magnitude >= 100 {
            let high = magnitude / 100
            end &-= 2
            out.storeBytes(of: JSONWriter.twoDigits(magnitude &- high &* 100), toByteOffset: end, as: UInt16.self)
            magnitude = high
        }
        if magnitude >= 10 {
            out.storeBytes(of: JSONWriter.twoDigits(magnitude), toByteOffset: end &- 2, as: UInt16.self)
        } else {
            out.storeBytes(of: UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude), toByteOffset: end &- 1, as: UInt8.self)
        }
        used &+= count
    }

    /// How many decimal digits `value` has (1...20): `floor(log10(2^bits))`
    /// from its bit length (`bits * 1233 >> 12`, exact for 1...64 bits),
    /// plus one when `value` reaches that power of ten (`| 1` counts 0 as
    /// one digit and changes no other count: `10^k - 1` is odd for k > 0).
    @inline(__always)
    private static func digitCount(_ value: UInt) -> Int {
        let bits = UInt.bitWidth &- (value | 1).leadingZeroBitCount
        let floorLog = (bits &* 1233) &>> 12
        return (value | 1) >= powersOfTen[floorLog] ? floorLog &+ 1 : floorLog
    }

    /// 10^0 ... 10^19.
    private static let powersOfTen: [UInt] = [
        1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000,
        10_000_000_000, 100_000_000_000, 1_000_000_000_000, 10_000_000_000_000, 100_000_000_000_000,
        1_000_000_000_000_000, 10_000_000_000_000_000, 100_000_000_000_000_000,
        1_000_000_000_000_000_000, 10_000_000_000_000_000_000,
    ]

    /// Two decimal digits of 0...99 (needs 2 bytes of reserved room).
    private mutating func putTwoDigits(_ pair: UInt) {
        UnsafeMutableRawPointer(base + used).storeBytes(of: JSONWriter.twoDigits(pair), as: UInt16.self)
        used &+= 2
    }

    /// The two decimal digits of 0...99, as a word whose bytes in memory are the digits in order.
    @inline(__always)
    private static func twoDigits(_ pair: UInt) -> UInt16 {
        UnsafeRawPointer(decimalPairs.utf8Start).loadUnaligned(fromByteOffset: 2 * Int(pair), as: UInt16.self)
    }

    /// The two decimal digits of 0...99, in order.
    private static let decimalPairs: StaticString = """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """

    @_effects(releasenone)
    public mutating func double(_ value: Double) {
        guard value.isFinite else {
            string(value.isNaN ? "NaN" : value < 0 ? "-Infinity" : "Infinity")
            return
        }
        if let thousandths = JSONWriter.exactThousandths(value) {
            return decimal(thousandths: thousandths)
        }
        var text = value.description
        text.withUTF8 { utf8 in
            reserve(utf8.count + 1)
            separate()
            append(utf8)
        }
        needsComma = true
    }

    /// `value * 1000` as an integer when `value` is exactly the double
    /// nearest to that many thousandths (a timestamp in milliseconds taken
    /// at microsecond resolution); nil otherwise.
    /// `value * 1000` is rounded to the nearest integer, halves away from
    /// zero (what `rounded()` does), without its call into libm: below
    /// 2^53 the product's integer part and fraction are exact, and from
    /// 2^53 on it is no integer of interest (nor is it after rounding: the
    /// doubles from 2^52 to 2^53 are all integers).
    @inline(__always)
    private static func exactThousandths(_ value: Double) -> Int? {
        let product = value * 1000
        guard product.magnitude < 9_007_199_254_740_992 else { return nil }
        var scaled = Int(product)
        let fraction = product - Double(scaled)
        if fraction >= 0.5 {
            scaled &+= 1
        } else if fraction <= -0.5 {
            scaled &-= 1
        }
        guard Double(scaled) / 1000 == value else { return nil }
        return scaled
    }

    /// `thousandths / 1000` as decimal digits with one to three decimals.
    /// It reads back as exactly the double it came from: the decimal is
    /// exact, and both it and that double round `thousandths / 1000` to
    /// the nearest double (`exactThousandths` checked the division).
    private mutating func decimal(thousandths: Int) {
        reserve(24)
        separate()
        if thousandths < 0 { put(UInt8(ascii: "-")) }
        let magnitude = thousandths.magnitude
        let fraction = magnitude % 1000
        putDigits(magnitude / 1000)
        put(UInt8(ascii: "."))
        // Trailing zeros dropped, at least one decimal kept.
        if fraction % 100 == 0 {
            put(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: fraction / 100))
        } else if fraction % 10 == 0 {
            putTwoDigits(fraction / 10)
        } else {
            put(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: fraction / 100))
            putTwoDigits(fraction % 100)
        }
        needsComma = true
    }

    @_effects(releasenone)
    public mutating func bool(_ value: Bool) {
        reserve(6)
        separate()
        let text = value ? JSONWriter.trueBytes : JSONWriter.falseBytes
        appendVerbatim(text.utf8Start, count: text.utf8CodeUnitCount)
        needsComma = true
    }

    /// A string value that is a literal needing no escape (an enum's raw
    /// value): written as stores of known length, like a key, with no call
    /// and no scan.
    @inlinable @inline(__always)
    public mutating func literal(_ value: StaticString) {
        assert(!JSONWriter.anyNeedsEscape(UnsafeBufferPointer(start: value.utf8Start, count: value.utf8CodeUnitCount)),
               "a literal value that needs an escape")
        let length = value.utf8CodeUnitCount
        reserve(length &+ 3)
        separate()
        put(UInt8(ascii: "\""))
        appendVerbatim(value.utf8Start, count: length)
        put(UInt8(ascii: "\""))
        needsComma = true
    }

    // MARK: Members (key and value)

    @inlinable @inline(__always)
    public mutating func member(_ name: StaticString, literal value: StaticString) {
        key(name)
        literal(value)
    }

    @inlinable @inline(__always)
    public mutating func member(_ name: StaticString, _ value: String) {
        key(name)
        string(value)
    }

    @inlinable @inline(__always)
    public mutating func member(_ name: StaticString, _ value: Int) {
        key(name)
        int(value)
    }

    @inlinable @inline(__always)
    public mutating func member(_ name: StaticString, _ value: Bool) {
        key(name)
        bool(value)
    }

    /// Leaves the member out when `value` is nil.
    @inlinable @inline(__always)
    public mutating func member(_ name: StaticString, ifPresent value: String?) {
        if let value { member(name, value) }
    }

    /// Leaves the member out when `value` is nil.
    @inlinable @inline(__always)
    public mutating func member(_ name: StaticString, ifPresent value: Int?) {
        if let value { member(name, value) }
    }

    // MARK: Values written twice

    /// Writes again the value `value` recorded (`note(_:from:)`) and returns
    /// true; returns false, writing nothing, when it holds no recorded value.
    @inlinable @inline(__always)
    public mutating func repeatValue(_ value: JSONRepeat) -> Bool {
        guard case .recorded(let start, let end) = value else { return false }
        copyWritten(start: start, end: end)
        return true
    }

    /// Where the value written next starts (after its comma, if it gets one):
    /// what `note(_:from:)` is given once the value is written.
    @inlinable @inline(__always)
    public var valueStart: Int { needsComma ? used &+ 1 : used }

    /// After a value that started at `start` (`valueStart`): records where
    /// it lies when `value` is wanted, so that `repeatValue` copies it.
    @inlinable @inline(__always)
    public func note(_ value: inout JSONRepeat, from start: Int) {
        if case .wanted = value { value = .recorded(start: start, end: used) }
    }

    /// Copies the bytes at `start..<end`, written earlier (`end <= used`), as
    /// the next value.
    @usableFromInline @inline(never) @_effects(releasenone)
    mutating func copyWritten(start: Int, end: Int) {
        let length = end &- start
        reserve(length &+ 1)
        separate()
        // After `reserve`: it may have moved the buffer. The ranges do not
        // overlap (`end <= used`).
        (base + used).update(from: base + start, count: length)
        used &+= length
        needsComma = true
    }

    /// True when `a` and `b` are written as the same bytes: the same
    /// representation (one storage, or the same small string), else the
    /// same UTF-8. Not `==`, which compares canonical equivalence: `é` and
    /// `e` with a combining accent are equal strings with different bytes.
    /// The first test, inlined: the same representation (two words compared).
    @inlinable @inline(__always)
    public static func sameBytes(_ a: String, _ b: String) -> Bool {
        let identical = Swift.withUnsafeBytes(of: a) { first in
            Swift.withUnsafeBytes(of: b) { second in
                first.loadUnaligned(as: UInt64.self) == second.loadUnaligned(as: UInt64.self)
                    && first.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                    == second.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            }
        }
        return identical || sameUTF8(a, b)
    }

    /// True when `a` and `b` hold the same UTF-8 bytes.
    @usableFromInline @_effects(releasenone)
    static func sameUTF8(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        let x = a.utf8Span.span, y = b.utf8Span.span
        for offset in 0..<x.count where x[offset] != y[offset] { return false }
        return true
    }

    /// True when the arrays of strings are written as the same bytes: one
    /// storage (a list shared, not compared), else string by string.
    @inlinable
    public static func sameBytes(_ a: [String], _ b: [String]) -> Bool {
        guard a.count == b.count else { return false }
        if sameStorage(a, b) { return true }
        for index in a.indices where !sameBytes(a[index], b[index]) { return false }
        return true
    }

    /// True when `a` and `b` are one array storage (so the same elements:
    /// a shared storage cannot have changed).
    @inlinable @inline(__always)
    public static func sameStorage<Element>(_ a: borrowing [Element], _ b: borrowing [Element]) -> Bool {
        a.withUnsafeBufferPointer { mine in
            b.withUnsafeBufferPointer { $0.baseAddress == mine.baseAddress && $0.count == mine.count }
        }
    }

    // MARK: Private

    private static let trueBytes: StaticString = "true"
    private static let falseBytes: StaticString = "false"

    /// Makes room for `extra` more bytes; every `put` is preceded by one.
    /// The writer's counts use wrapping arithmetic (`&+`): `used` never
    /// passes `capacity`, an allocation's size, and `extra` is the size of
    /// one value, so they cannot overflow, and the checks would cost an
    /// instruction at every byte stored.
    @inlinable @inline(__always)
    mutating func reserve(_ extra: Int) {
        if used &+ extra > capacity { grow(to: used &+ extra) }
    }

    /// Out of line: rare, and its allocation and copy would otherwise be
    /// inlined at every value written. `releasenone` like the value writers
    /// (the raw buffer it frees is no class instance): the encoders inline
    /// `reserve`, and one call that might release anything would make them
    /// retain every value they pass on.
    @usableFromInline @inline(never) @_effects(releasenone)
    mutating func grow(to needed: Int) {
        let newCapacity = max(capacity * 2, needed)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: used)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    /// Stores one byte in room already reserved.
    @inlinable @inline(__always)
    mutating func put(_ byte: UInt8) {
        base[used] = byte
        used &+= 1
    }

    /// Stores `length` bytes in room already reserved; a short run (a key,
    /// most names and values) with a few overlapping word copies instead of
    /// a call to `memcpy`.
    @inlinable @inline(__always)
    mutating func appendVerbatim(_ source: UnsafePointer<UInt8>, count length: Int) {
        let from = UnsafeRawPointer(source)
        let out = UnsafeMutableRawPointer(base + used)
        if length > 16 {
            out.copyMemory(from: from, byteCount: length)
        } else if length >= 8 {
            out.storeBytes(of: from.loadUnaligned(as: UInt64.self), as: UInt64.self)
            out.storeBytes(of: from.loadUnaligned(fromByteOffset: length &- 8, as: UInt64.self),
                           toByteOffset: length &- 8, as: UInt64.self)
        } else if length >= 4 {
            out.storeBytes(of: from.loadUnaligned(as: UInt32.self), as: UInt32.self)
            out.storeBytes(of: from.loadUnaligned(fromByteOffset: length &- 4, as: UInt32.self),
                           toByteOffset: length &- 4, as: UInt32.self)
        } else if length > 0 {
            out.storeBytes(of: source[0], as: UInt8.self)
            out.storeBytes(of: source[length &>> 1], toByteOffset: length &>> 1, as: UInt8.self)
            out.storeBytes(of: source[length &- 1], toByteOffset: length &- 1, as: UInt8.self)
        }
        used &+= length
    }

    /// Copies `utf8` as it is and returns true when none of its bytes needs
    /// an escape (room for it must be reserved); otherwise returns false with
    /// `used` unchanged (the words already stored are overwritten by what
    /// comes next). Each byte is read once, a word at a time: the check and
    /// the copy use the same loads, and a string shorter than eight bytes
    /// is checked as one word made of its first, middle and last bytes or
    /// its first and last four (overlapping), plus padding that needs no escape.
    @inline(__always)
    private mutating func appendIfClean(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let source = utf8.baseAddress else { return true }
        let length = utf8.count
        let from = UnsafeRawPointer(source)
        let out = UnsafeMutableRawPointer(base + used)
        if length >= 8 {
            var offset = 0
            while length &- offset >= 8 {
                let word = from.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                if JSONWriter.needsEscape(word) { return false }
                out.storeBytes(of: word, toByteOffset: offset, as: UInt64.self)
                offset &+= 8
            }
            if offset < length {
                let word = from.loadUnaligned(fromByteOffset: length &- 8, as: UInt64.self)
                if JSONWriter.needsEscape(word) { return false }
                out.storeBytes(of: word, toByteOffset: length &- 8, as: UInt64.self)
            }
        } else if length >= 4 {
            let first = from.loadUnaligned(as: UInt32.self)
            let last = from.loadUnaligned(fromByteOffset: length &- 4, as: UInt32.self)
            if JSONWriter.needsEscape(UInt64(first) | UInt64(last) << 32) { return false }
            out.storeBytes(of: first, as: UInt32.self)
            out.storeBytes(of: last, toByteOffset: length &- 4, as: UInt32.self)
        } else if length > 0 {
            let first = source[0], middle = source[length &>> 1], last = source[length &- 1]
            // The other five bytes are `a`, which needs no escape.
            let word = 0x6161_6161_6100_0000 | UInt64(first) | UInt64(middle) << 8 | UInt64(last) << 16
            if JSONWriter.needsEscape(word) { return false }
            out.storeBytes(of: first, as: UInt8.self)
            out.storeBytes(of: middle, toByteOffset: length &>> 1, as: UInt8.self)
            out.storeBytes(of: last, toByteOffset: length &- 1, as: UInt8.self)
        }
        used &+= length
        return true
    }

    /// Stores bytes in room already reserved.
    @inline(__always)
    private mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        (base + used).update(from: source, count: bytes.count)
        used &+= bytes.count
    }


    /// Needs one byte of reserved room.
    @inlinable @inline(__always)
    mutating func separate() {
        if needsComma { put(UInt8(ascii: ",")) }
    }

    /// Appends UTF-8 text escaped for a JSON string (room for its unescaped
    /// length must be reserved; escapes reserve their own): runs that need
    /// no escape are copied in one go.
    private mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        guard let source = utf8.baseAddress else { return }
        let end = utf8.count
        var runStart = 0
        while true {
            let next = JSONWriter.firstEscape(source, from: runStart, end: end)
            append(UnsafeBufferPointer(start: source + runStart, count: next - runStart))
            guard next < end else { return }
            let byte = source[next]
            runStart = next + 1
            // Room for the escape (up to 6 bytes) and what is left unwritten.
            reserve(6 + (end - runStart))
            put(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""): put(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): put(UInt8(ascii: "\\"))
            case 0x0A: put(UInt8(ascii: "n"))
            case 0x0D: put(UInt8(ascii: "r"))
            case 0x09: put(UInt8(ascii: "t"))
            case 0x08: put(UInt8(ascii: "b"))
            case 0x0C: put(UInt8(ascii: "f"))
            default:
                put(UInt8(ascii: "u"))
                put(UInt8(ascii: "0"))
                put(UInt8(ascii: "0"))
                put(JSONWriter.hexDigit(Int(byte) &>> 4))
                put(JSONWriter.hexDigit(Int(byte) & 0x0f))
            }
        }
    }

    /// The index of the first byte at or after `from` that needs an escape
    /// (below U+0020, `"`, `\`), or `end`. Eight bytes at a time; the last
    /// few are covered by the word ending at `end` when the text is that long
    /// (it overlaps bytes already found clean, or an escape already written,
    /// which only sends it to the byte loop).
    @inline(__always)
    private static func firstEscape(_ source: UnsafePointer<UInt8>, from: Int, end: Int) -> Int {
        var index = from
        while end &- index >= 8 {
            if needsEscape(UnsafeRawPointer(source + index).loadUnaligned(as: UInt64.self)) { break }
            index &+= 8
        }
        if end &- index < 8, end >= 8, index < end,
           !needsEscape(UnsafeRawPointer(source + end - 8).loadUnaligned(as: UInt64.self)) {
            return end
        }
        while index < end {
            let byte = source[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return index }
            index &+= 1
        }
        return end
    }

    /// True when one of `utf8`'s bytes needs an escape.
    @usableFromInline
    static func anyNeedsEscape(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let source = utf8.baseAddress else { return false }
        return firstEscape(source, from: 0, end: utf8.count) < utf8.count
    }

    /// True when one of the eight bytes of `word` is below 0x20, `"` or `\`
    /// (the classic "has a byte less than n" bit trick, exact for the
    /// existence test): for each byte `b`, `(b - n) & ~b` has its high bit
    /// set when `b < n`; the lowest such byte gets no borrow from below, so
    /// a borrow can only add high bits above a byte already found. A byte
    /// equal to `"` or `\` is one whose XOR with it is below 1. The three
    /// differences share one mask: XOR with `"` or `\` (both below 0x80)
    /// keeps each byte's high bit, so `~word` stands for all three operands.
    @inline(__always)
    private static func needsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let control = word &- ones &* 0x20
        let quote = (word ^ (ones &* 0x22)) &- ones
        let backslash = (word ^ (ones &* 0x5c)) &- ones
        return (control | quote | backslash) & ~word & (ones &* 0x80) != 0
    }
}


/// A value that one line of a `JSONWriter` writes twice (the same fields on
/// both legs of an exchange): the first time it is written as usual and
/// where it lies is noted, the second time those bytes are copied. The
/// encoder decides beforehand, by comparing the two values (for the same
/// bytes, not for `==`), which values repeat.
///
/// Invariant: a recorded range lies within the line being written, so the
/// writer holds it (a line is written whole, between two `endLine`s).
public enum JSONRepeat: Sendable {
    /// Written as usual, nothing noted.
    case off
    /// Written again later in the line: the first write notes where.
    case wanted
    /// Written at `start..<end` of the writer: the next write copies it.
    case recorded(start: Int, end: Int)
}
