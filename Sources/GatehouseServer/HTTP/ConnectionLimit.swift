#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How many connections this process can really hold: every connection is a file descriptor, and a
/// process that runs out of them cannot accept, open its database connections or read its files. The
/// soft limit is raised to the hard one (as servers do), and a quarter of it (at least 64) is left
/// for everything that is not a client connection.
enum ConnectionLimit {
    /// Connections the listener accepts each time its event loop wakes (NIO's default is 4). An event
    /// loop wakes once for every ready socket, so under a flood of 2,000 busy connections it accepted
    /// 4 new ones for every 1,000 requests it read, about 45 a second: a new client, the liveness
    /// probe among them, waited in the kernel's queue for up to 17 s while the flood was served.
    static let acceptsPerWakeup: UInt = 256

    static func allowed(_ configured: Int) -> Int {
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        var limits = rlimit()
        guard getrlimit(resource, &limits) == 0 else { return configured }
        if limits.rlim_cur < limits.rlim_max {
            var raised = limits
            raised.rlim_cur = limits.rlim_max
            if setrlimit(resource, &raised) == 0 { limits = raised }
        }
        let files = Int(clamping: limits.rlim_cur)
        return max(16, min(configured, files - max(64, files / 4)))
    }
}
