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
        var authenticator = keyed
        authenticator.update(data: Array(parts.joined(separator: "\n").utf8))
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
