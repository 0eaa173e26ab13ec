#if canImport(Glibc)
import Glibc
#endif

extension timespec {
    /// The time in ns: since the epoch for `stat`'s `st_mtim` and `st_ctim` and for
    /// `CLOCK_REALTIME`, since boot for the monotonic clocks. The one place such times are
    /// turned into a number (source identities, disk-cache entries, the URL memo's clock).
    @inlinable public var nanoseconds: Int64 { Int64(tv_sec) &* 1_000_000_000 &+ Int64(tv_nsec) }

    /// The time on `clock` now (clock_gettime(2)).
    @inlinable public static func now(_ clock: clockid_t) -> timespec {
        var t = timespec()
        clock_gettime(clock, &t)
        return t
    }
}
