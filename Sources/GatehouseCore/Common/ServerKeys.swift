import Crypto
import Foundation
import Synchronization

/// The keys the service computes with, all derived from the master key (so every instance has them and
/// none is stored): the app-tag key of ztokens, the device-identity key, and the roots of the
/// devices' request-signing and ztoken keys.
public struct ServerKeys: Sendable {
    public let ztoken: SymmetricKey
    public let deviceIdentity: SymmetricKey
    public let deviceKeyRoot: SymmetricKey
    /// The root of the devices' ztoken keys (`ZToken.deviceKey`).
    public let ztokenDeviceRoot: SymmetricKey
    /// Its HMAC, set up once: every risk query derives its device's key from it, forged ones included.
    let ztokenDeviceRootKeyed: HMAC<SHA256>
    /// Each app's ztoken tag, computed once: every risk query and minted token needs its app's.
    let appTags = AppTags()
    /// The ztoken keys of devices that have shown a token with a valid MAC (`ZToken.check`).
    let provenDeviceKeys = ProvenDeviceKeys()

    public init(box: SecretBox) {
        ztoken = box.derivedKey(purpose: "ztoken-mac-v1")
        deviceIdentity = box.derivedKey(purpose: "device-identity-v1")
        deviceKeyRoot = box.derivedKey(purpose: "device-key-v1")
        ztokenDeviceRoot = box.derivedKey(purpose: "ztoken-device-v2")
        ztokenDeviceRootKeyed = HMAC(key: ztokenDeviceRoot)
    }

    static func mac(_ key: SymmetricKey, _ parts: [String]) -> [UInt8] {
        mac(HMAC(key: key), parts)
    }

    /// The same under a key whose HMAC is set up already.
    static func mac(_ keyed: HMAC<SHA256>, _ parts: [String]) -> [UInt8] {
        // The parts joined by "\n", gathered into one buffer and fed in one update: every risk query
        // derives its device's key here, forged ones included, and each of swift-crypto's `update`
        // calls goes through its generic `DataProtocol` path (a profile of the forged flood put five
        // updates a key at 1.2 µs each, the hashing itself at a tenth of that).
        var joined: [UInt8] = []
        joined.reserveCapacity(parts.reduce(parts.count) { $0 + $1.utf8.count })
        for (index, part) in parts.enumerated() {
            if index > 0 { joined.append(0x0A) }
            joined.append(contentsOf: part.utf8)
        }
        var authenticator = keyed
        authenticator.update(data: joined)
        return Array(authenticator.finalize())
    }
}

/// The apps' ztoken tags (`ZToken.appTag`), kept once computed. Apps are few and operator-made; the
/// bound only keeps a misuse from growing it without end.
final class AppTags: Sendable {
    private let tags = Mutex<[AppID: [UInt8]]>([:])
    private static let bound = 4096

    func tag(for app: AppID, compute: () -> [UInt8]) -> [UInt8] {
        if let known = tags.withLock({ $0[app] }) { return known }
        let tag = compute()
        tags.withLock { tags in
            if tags.count >= Self.bound { tags.removeAll() }
            tags[app] = tag
        }
        return tag
    }
}

/// Devices' ztoken keys, set up for HMAC, kept once a token's MAC has proved them: a device's next
/// tokens, and the same token checked again by the router after the event loop (a fresh token is
/// checked by both), skip the key's derivation, which was a third of a token's check (docs/PERFORMANCE.md).
/// Only a valid MAC puts a key here, so forged tokens, whatever devices they name, cost what they did
/// and cannot fill it; the bound only keeps many devices' keys from growing it without end, and a
/// key dropped is derived again.
final class ProvenDeviceKeys: Sendable {
    struct Device: Hashable {
        let app: AppID
        let device: [UInt8]
        let epoch: UInt32
    }

    private let keys = Mutex<[Device: HMAC<SHA256>]>([:])
    static let bound = 8192

    func key(for device: Device) -> HMAC<SHA256>? {
        keys.withLock { $0[device] }
    }

    func remember(_ key: HMAC<SHA256>, for device: Device) {
        keys.withLock { keys in
            if keys.count >= Self.bound { keys.removeAll() }
            keys[device] = key
        }
    }

    var count: Int { keys.withLock { $0.count } }
}
