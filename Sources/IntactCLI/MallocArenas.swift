import Glibc

/// glibc's malloc arenas, capped for a server whose allocating threads are its event loops.
///
/// Dispatch runs a loop's serial queue on whichever worker thread is free, and
/// glibc gives each new thread an arena of its own, so without a cap one
/// loop's allocations spread over many arenas whose free memory is not
/// shared; one arena per loop, the threads that allocate at once
/// (Docs/performance.md#malloc-arenas).
enum MallocArenas {
    /// `mallopt(M_ARENA_MAX, …)`; `<malloc.h>` is not in Swift's Glibc module.
    private static let arenaMaxParameter: Int32 = -8

    /// Caps the arenas at `loops` (at least one), unless `MALLOC_ARENA_MAX` is
    /// set in `environment` (glibc has then read it; the user's choice wins).
    /// Returns whether the cap was set.
    @discardableResult
    static func limit(to loops: Int, environment: [String: String]) -> Bool {
        guard environment["MALLOC_ARENA_MAX"] == nil,
              let symbol = dlsym(nil, "mallopt") else { return false }
        typealias MallOpt = @convention(c) (Int32, Int32) -> Int32
        let mallopt = unsafeBitCast(symbol, to: MallOpt.self)
        return mallopt(arenaMaxParameter, Int32(clamping: max(1, loops))) == 1
    }
}
