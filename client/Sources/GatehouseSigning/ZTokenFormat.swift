import Crypto
import Foundation

/// The ztoken's bytes, shared by the device, which mints it offline, and the server, which checks it
/// with no database read (docs/sdk-protocol.md). 68 bytes, 91 base64url characters:
///
/// ```
/// 0      version: 2 (minted by the device or /v1/sdk/ztoken), 3 (minted by the H5 bridge for a page)
/// 1..12  token id, 12 random bytes
/// 13..16 issued at, Unix seconds, big endian (the device's clock corrected by the server's time at start)
/// 17..18 time to live, seconds, big endian
/// 19     event id - 3300
/// 20..27 account tag = HMAC-SHA256(ztokenKey, "account:" + accountId)[0..<8]
/// 28..51 context, as device start hands it: app tag (4), device id (16), key epoch (4, big endian)
/// 52..67 MAC = HMAC-SHA256(ztokenKey, bytes 0..<52)[0..<16]
/// ```
/// `ztokenKey` (32 bytes) comes from device start; the server derives it again from its master key,
/// the app, the device and the epoch the token carries.
public enum ZTokenFormat {
    public static let byteCount = 68
    public static let contextByteCount = 24
    public static let deviceVersion: UInt8 = 2
    public static let pageVersion: UInt8 = 3
    public static let firstEvent = 3300

    /// What the bytes say, before any check but their length and version.
    public struct Fields: Sendable, Equatable {
        public let version: UInt8
        public let tokenID: [UInt8]
        public let issuedAt: UInt32
        public let ttlSeconds: UInt16
        public let eventID: Int
        public let accountTag: [UInt8]
        public let appTag: [UInt8]
        public let deviceID: [UInt8]
        public let keyEpoch: UInt32
        public let signedBytes: [UInt8]
        public let mac: [UInt8]
    }

    public static func accountTag(_ account: String, key: SymmetricKey) -> [UInt8] {
        accountTag(account, using: HMAC(key: key))
    }

    public static func mac(_ bytes: [UInt8], key: SymmetricKey) -> [UInt8] {
        mac(bytes, using: HMAC(key: key))
    }

    /// The same with the key's HMAC set up once: a token's check computes both under one key, and the
    /// key's setup costs as much as either code.
    public static func accountTag(_ account: String, using keyed: HMAC<SHA256>) -> [UInt8] {
        var authenticator = keyed
        authenticator.update(data: Array(("account:" + account).utf8))
        return Array(authenticator.finalize().prefix(8))
    }

    public static func mac(_ bytes: [UInt8], using keyed: HMAC<SHA256>) -> [UInt8] {
        var authenticator = keyed
        authenticator.update(data: bytes)
        return Array(authenticator.finalize().prefix(16))
    }

    /// A token; `event` is 3300 to 3555 and `context` the 24 bytes device start handed over.
    public static func mint(
        version: UInt8 = deviceVersion,
        tokenID: [UInt8],
        issuedAt: UInt32,
        ttlSeconds: UInt16,
        event: Int,
        account: String,
        context: [UInt8],
        key: SymmetricKey
    ) -> String {
        precondition(tokenID.count == 12 && context.count == contextByteCount && (firstEvent..<firstEvent + 256).contains(event))
        let keyed = HMAC<SHA256>(key: key)
        var bytes: [UInt8] = [version] + tokenID
        bytes += withUnsafeBytes(of: issuedAt.bigEndian, Array.init)
        bytes += withUnsafeBytes(of: ttlSeconds.bigEndian, Array.init)
        bytes.append(UInt8(event - firstEvent))
        bytes += accountTag(account, using: keyed)
        bytes += context
        bytes += mac(bytes, using: keyed)
        return Base64URL.encode(bytes)
    }

    /// The fields of a token of the right length and a known version; nil for anything else.
    public static func open(_ text: String) -> Fields? {
        guard text.utf8.count <= 100, let bytes = Base64URL.decode(text), bytes.count == byteCount,
            bytes[0] == deviceVersion || bytes[0] == pageVersion
        else { return nil }
        func integer(_ range: Range<Int>) -> UInt32 { bytes[range].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }
        return Fields(
            version: bytes[0],
            tokenID: Array(bytes[1..<13]),
            issuedAt: integer(13..<17),
            ttlSeconds: UInt16(integer(17..<19)),
            eventID: firstEvent + Int(bytes[19]),
            accountTag: Array(bytes[20..<28]),
            appTag: Array(bytes[28..<32]),
            deviceID: Array(bytes[32..<48]),
            keyEpoch: integer(48..<52),
            signedBytes: Array(bytes[0..<52]),
            mac: Array(bytes[52..<68])
        )
    }
}
