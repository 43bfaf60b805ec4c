/// Pairs records across the taps of a path as they stream in, in time
/// order, holding only those still waiting for a partner: the pairing of a
/// streamed verification (`StreamingVerifier`).
///
/// A record joins a pending exchange of the same `Intact-Trace` id that has
/// no record of its tap yet; a record without one (an app that sends no
/// trace) joins, by the fallback keys — method and path of the request on
/// the legs that face each other — a pending exchange whose neighbouring
/// tap's record sent (or received) that request, oldest first, never one
/// carrying another trace id. An exchange leaves the window, to be judged,
/// as soon as every tap that can still see it has (`isComplete`), or when
/// the stream has moved `window` milliseconds past its first record (then
/// what is missing is judged missing), or at the end.
///
/// A record older than the window (its time is more than `window` before
/// the latest seen: a clock step, files merged out of order) is still
/// paired with what is pending, and counted in `late` with the first few
/// named in `lateExamples`: never silently unpaired.
///
/// Memory: the pending exchanges (bounded by what arrives within the
/// window, and by `maximumPending`, beyond which the oldest leave early).
/// One owner.
struct ExchangeWindow {
    /// One exchange being gathered: at most one record per tap.
    struct Pending {
        var members: [ExchangeRecord?]
        var trace: String?
        var firstTime: Double
    }

    /// The legs each tap's records are linked by (`PathTap.entry`/`exit`).
    let entries: [ExchangeRecord.Leg.Role]
    let exits: [ExchangeRecord.Leg.Role]
    /// Milliseconds an exchange waits for its partners.
    let window: Double
    let maximumPending: Int

    /// The exchanges pending, by id (ids grow; one that left is gone).
    private var pending: [Int: Pending] = [:]
    private var nextID = 0
    /// Ids in the order their exchanges came, oldest first; `head` is the first not yet passed.
    private var order: [Int] = []
    private var head = 0
    private var byTrace: [String: [Int]] = [:]
    /// Exchanges open towards a tap by fallback key: "tap>key" (its record at
    /// `tap` sent that request on) or "tap<key" (received it) → ids, oldest first.
    private var open: [String: [Int]] = [:]
    var pendingCount: Int { pending.count }
    /// The latest record time seen.
    private(set) var watermark = -Double.infinity
    private(set) var late = 0
    private(set) var lateExamples: [String] = []
    private(set) var evictedEarly = 0

    init(entries: [ExchangeRecord.Leg.Role], exits: [ExchangeRecord.Leg.Role], window: Double, maximumPending: Int = 200_000) {
        self.entries = entries
        self.exits = exits
        self.window = window
        self.maximumPending = maximumPending
    }

    private var tapCount: Int { entries.count }

    /// The request a record sent on (`exit`) or received on (`entry`) a leg, as a fallback key.
    private func key(_ record: ExchangeRecord, _ role: ExchangeRecord.Leg.Role) -> String? {
        guard let request = record.leg(role)?.request else { return nil }
        return (request.method ?? "") + " " + (request.path ?? "")
    }

    /// Adds a record of tap `tap` with its time (`RecordingMerge.time`);
    /// `where` names it for a late-record warning. Returns the exchanges
    /// that left the window: this one when it completed, and any the time
    /// moved past.
    mutating func add(_ record: ExchangeRecord, tap: Int, time: Double, where place: @autoclosure () -> String)
        -> [[ExchangeRecord?]] {
        var out: [[ExchangeRecord?]] = []
        if time < watermark - window {
            late += 1
            if lateExamples.count < 5 {
                let behind = Int(((watermark - time) / 1000).rounded())
                lateExamples.append("\(place()): recorded \(behind) s before records already read (clock step or "
                                    + "files merged out of order?), beyond the pairing window of \(Int(window / 1000)) s: "
                                    + "paired only with exchanges still pending")
            }
        }
        watermark = max(watermark, time)
        if RequestlessConnection.of(record) != nil {
            var members = [ExchangeRecord?](repeating: nil, count: tapCount)
            members[tap] = record
            out.append(members)
        } else {
            let id = join(record, tap: tap) ?? create(record, tap: tap, time: time)
            if isComplete(pending[id]!) { out.append(finish(id)) } else { register(id) }
        }
        out += expire()
        return out
    }

    /// Moves the time on to `time` without a record (while following, the
    /// clock): what waited a window's length leaves.
    mutating func advance(to time: Double) -> [[ExchangeRecord?]] {
        watermark = max(watermark, time)
        return expire()
    }

    /// Every exchange still pending, oldest first: the end of the stream.
    mutating func drain() -> [[ExchangeRecord?]] {
        var out: [[ExchangeRecord?]] = []
        while head < order.count {
            let id = order[head]
            head += 1
            if pending[id] != nil { out.append(finish(id)) }
        }
        return out
    }

    /// The pending exchange `record` joins, if any (it is then added to it).
    private mutating func join(_ record: ExchangeRecord, tap: Int) -> Int? {
        if let trace = record.traceID, let list = byTrace[trace],
           let id = list.first(where: { pending[$0].map { $0.members[tap] == nil } ?? false }) {
            pending[id]!.members[tap] = record
            return id
        }
        // By the request this record received from the tap before it, or sent to the tap after it:
        // of the exchanges open for it there, the one whose request matches the body and is nearest in time.
        var slots: [(slot: String, neighbour: Int, mine: ExchangeRecord.Leg.Role, theirs: ExchangeRecord.Leg.Role)] = []
        if tap > 0, let key = key(record, entries[tap]) { slots.append(("\(tap - 1)>\(key)", tap - 1, entries[tap], exits[tap - 1])) }
        if tap + 1 < tapCount, let key = key(record, exits[tap]) {
            slots.append(("\(tap + 1)<\(key)", tap + 1, exits[tap], entries[tap + 1]))
        }
        for (slot, neighbour, mine, theirs) in slots {
            guard var list = open[slot] else { continue }
            // Exchanges that left the window are dropped from the front as they are met.
            while let first = list.first, pending[first] == nil { list.removeFirst() }
            open[slot] = list.isEmpty ? nil : list
            let request = record.leg(mine)?.request
            var best: (id: Int, cost: Double)?
            for id in list.prefix(ExchangeWindow.candidatesCompared) {
                guard let entry = pending[id], entry.members[tap] == nil,
                      let other = entry.members[neighbour]?.leg(theirs)?.request else { continue }
                if let mine = record.traceID, let theirs = entry.trace, mine != theirs { continue }
                let apart = abs((other.timings.earliest?.millisecondsSince1970 ?? 0)
                                - (request?.timings.earliest?.millisecondsSince1970 ?? 0))
                let cost = (other.digest.body == request?.digest.body ? 0 : 1e15) + (apart.isFinite ? apart : 1e14)
                if best == nil || cost < best!.cost { best = (id, cost) }
            }
            guard let id = best?.id else { continue }
            pending[id]!.members[tap] = record
            if pending[id]!.trace == nil, let trace = record.traceID {
                pending[id]!.trace = trace
                byTrace[trace, default: []].append(id)
            }
            return id
        }
        return nil
    }

    /// How many open exchanges a record without a trace is compared with.
    static let candidatesCompared = 64

    private mutating func create(_ record: ExchangeRecord, tap: Int, time: Double) -> Int {
        var members = [ExchangeRecord?](repeating: nil, count: tapCount)
        members[tap] = record
        let id = nextID
        nextID += 1
        pending[id] = Pending(members: members, trace: record.traceID, firstTime: time)
        order.append(id)
        if let trace = record.traceID { byTrace[trace, default: []].append(id) }
        return id
    }

    /// Notes where an exchange can still be joined by fallback key: next to
    /// the first and the last tap it has a record of.
    private mutating func register(_ id: Int) {
        guard let entry = pending[id] else { return }
        let filled = entry.members.indices.filter { entry.members[$0] != nil }
        guard let first = filled.first, let last = filled.last else { return }
        if first > 0, let record = entry.members[first], let key = key(record, entries[first]) {
            open["\(first)<\(key)", default: []].append(id)
        }
        if last + 1 < tapCount, let record = entry.members[last], let key = key(record, exits[last]) {
            open["\(last)>\(key)", default: []].append(id)
        }
    }

    /// True when no tap can add to the exchange any more: its records are
    /// consecutive taps, from the first tap (or one that received no
    /// request) to the last (or one that sent none on).
    private func isComplete(_ entry: Pending) -> Bool {
        let filled = entry.members.indices.filter { entry.members[$0] != nil }
        guard let first = filled.first, let last = filled.last, filled.count == last - first + 1 else { return false }
        let leftClosed = first == 0 || entry.members[first].flatMap { $0.leg(entries[first])?.request } == nil
        let rightClosed = last == tapCount - 1 || entry.members[last].flatMap { $0.leg(exits[last])?.request } == nil
        return leftClosed && rightClosed
    }

    private mutating func finish(_ id: Int) -> [ExchangeRecord?] {
        let entry = pending.removeValue(forKey: id)!
        if let trace = entry.trace {
            byTrace[trace]?.removeAll { $0 == id }
            if byTrace[trace]?.isEmpty == true { byTrace[trace] = nil }
        }
        return entry.members
    }

    /// Exchanges the time moved `window` past, and the oldest beyond `maximumPending`.
    private mutating func expire() -> [[ExchangeRecord?]] {
        var out: [[ExchangeRecord?]] = []
        while head < order.count {
            let id = order[head]
            if let entry = pending[id] {
                let expired = entry.firstTime + window < watermark
                guard expired || pending.count > maximumPending else { break }
                if !expired { evictedEarly += 1 }
                out.append(finish(id))
            }
            head += 1
        }
        if head > 4096 && head * 2 > order.count {
            order.removeFirst(head)
            head = 0
            open = open.compactMapValues { list in
                let live = list.filter { pending[$0] != nil }
                return live.isEmpty ? nil : live
            }
        }
        return out
    }
}
