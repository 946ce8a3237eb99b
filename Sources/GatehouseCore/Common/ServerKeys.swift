import Crypto
import Foundation

/// The keys the service computes with, all derived from the master key (so every instance has them and
/// none is stored): the ztoken MAC key, the device-identity key and the device-key root.
public struct ServerKeys: Sendable {
    public let ztoken: SymmetricKey
    public let deviceIdentity: SymmetricKey
    public let deviceKeyRoot: SymmetricKey

    public init(box: SecretBox) {
        ztoken = box.derivedKey(purpose: "ztoken-mac-v1")
        deviceIdentity = box.derivedKey(purpose: "device-identity-v1")
        deviceKeyRoot = box.derivedKey(purpose: "device-key-v1")
    }

    static func mac(_ key: SymmetricKey, _ parts: [String]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array(parts.joined(separator: "\n").utf8), using: key))
    }
}
