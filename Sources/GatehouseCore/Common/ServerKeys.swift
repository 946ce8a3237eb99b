import Crypto
import Foundation

/// The keys the service computes with, all derived from the master key (so every instance has them and
/// none is stored): the app-tag key of ztokens, the device-identity key, and the roots of the
/// devices' request-signing and ztoken keys.
public struct ServerKeys: Sendable {
    public let ztoken: SymmetricKey
    public let deviceIdentity: SymmetricKey
    public let deviceKeyRoot: SymmetricKey
    /// The root of the devices' ztoken keys (`ZToken.deviceKey`).
    public let ztokenDeviceRoot: SymmetricKey

    public init(box: SecretBox) {
        ztoken = box.derivedKey(purpose: "ztoken-mac-v1")
        deviceIdentity = box.derivedKey(purpose: "device-identity-v1")
        deviceKeyRoot = box.derivedKey(purpose: "device-key-v1")
        ztokenDeviceRoot = box.derivedKey(purpose: "ztoken-device-v2")
    }

    static func mac(_ key: SymmetricKey, _ parts: [String]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array(parts.joined(separator: "\n").utf8), using: key))
    }
}
