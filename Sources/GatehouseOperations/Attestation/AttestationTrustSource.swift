import Foundation
import GatehouseCore
import Logging
import Synchronization
import X509

/// The roots and the revocation list hardware attestations are checked against. The roots are
/// compiled in (plus a test-only file); the revocation list is the operator's file, read again when
/// it changes (looked at no more than once a minute), so that an update needs no restart. A list
/// that stops parsing keeps the last good one and logs why: a typo must not unrevoke every key.
public final class AttestationTrustSource: Sendable {
    static let recheckInterval: TimeInterval = 60

    private struct State {
        var trust: AttestationTrust
        var listModified: Date?
        var checkedAt: Date
    }

    private let revocationListPath: String?
    private let logger: Logger
    private let state: Mutex<State>

    public convenience init(_ configuration: GatehouseConfiguration, logger: Logger) throws {
        try self.init(revocationListPath: configuration.androidRevocationList, testRootsPath: configuration.testAttestationRoots, logger: logger)
    }

    public init(revocationListPath: String?, testRootsPath: String?, logger: Logger) throws {
        var apple = try AttestationChain.certificates(pem: PlatformRoots.appleAppAttestation)
        var google = try AttestationChain.certificates(pem: PlatformRoots.googleHardwareAttestation)
        if let testRootsPath {
            guard let pem = try? String(contentsOfFile: testRootsPath, encoding: .utf8) else {
                throw ConfigurationError("GATEHOUSE_TEST_ATTESTATION_ROOTS \(testRootsPath) cannot be read")
            }
            let extra = try AttestationChain.certificates(pem: pem)
            apple += extra
            google += extra
            logger.warning(
                "Trusting \(extra.count) test attestation root(s) from GATEHOUSE_TEST_ATTESTATION_ROOTS: for test devices only, never in production."
            )
        }
        var revoked = AttestationRevocationList(serials: [])
        var modified: Date?
        if let revocationListPath {
            guard let loaded = Self.read(revocationListPath) else {
                throw ConfigurationError("GATEHOUSE_ANDROID_REVOCATION_LIST \(revocationListPath) is not a readable Google status list")
            }
            (revoked, modified) = loaded
        }
        self.revocationListPath = revocationListPath
        self.logger = logger
        state = Mutex(
            State(trust: AttestationTrust(appleRoots: apple, googleRoots: google, revoked: revoked), listModified: modified, checkedAt: Date())
        )
    }

    /// The trust to check with now, the revocation list re-read first if its file changed.
    public func current(at now: Date = Date()) -> AttestationTrust {
        let (trust, due) = state.withLock { state in
            let due = revocationListPath != nil && now.timeIntervalSince(state.checkedAt) >= Self.recheckInterval
            if due { state.checkedAt = now }
            return (state.trust, due)
        }
        guard due, let path = revocationListPath else { return trust }
        let modified = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate]) as? Date
        guard modified != state.withLock({ $0.listModified }) else { return trust }
        guard let (revoked, listModified) = Self.read(path) else {
            logger.error("GATEHOUSE_ANDROID_REVOCATION_LIST \(path) no longer reads as a status list; the previous list stays in force.")
            return trust
        }
        let updated = AttestationTrust(appleRoots: trust.appleRoots, googleRoots: trust.googleRoots, revoked: revoked)
        state.withLock {
            $0.trust = updated
            $0.listModified = listModified
        }
        logger.info("Android attestation revocation list reloaded: \(revoked.serials.count) revoked or suspended serials.")
        return updated
    }

    /// Google's list is a few hundred KiB; a file past 64 MiB is not one, and is not read.
    private static func read(_ path: String) -> (AttestationRevocationList, Date?)? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let size = attributes[.size] as? NSNumber, size.intValue <= 64 << 20,
            let data = FileManager.default.contents(atPath: path), let list = try? AttestationRevocationList(json: data)
        else { return nil }
        return (list, attributes[.modificationDate] as? Date)
    }
}
