import Crypto
import Foundation
import GatehouseSigning

/// The app's own user identifier, as the SDK passes it with each ztoken request.
public struct AccountID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(validating text: String) throws(DomainError) {
        guard (1...128).contains(text.unicodeScalars.count), !text.hasControlCharacters else {
            throw DomainError(.invalidAccountID, "accountId is 1 to 128 characters without control characters.", field: "accountId")
        }
        rawValue = text
    }

    public var description: String { rawValue }
}

/// What a ztoken says, once its MAC has been checked.
public struct ZTokenClaims: Equatable, Sendable {
    /// 12 random bytes, base64url: the key of its consumption.
    public let tokenID: String
    public let issuedAt: Date
    /// The token's own lifetime, cut to the app's.
    public let ttlSeconds: Int
    public let eventID: EventID
    public let deviceID: DeviceID
    /// The device start whose key minted it.
    public let keyEpoch: UInt32
    /// Minted by the H5 bridge for a page (the page's URL was noted when it was).
    public let fromPage: Bool
    /// The lifetime the token itself says, before the app's cut.
    let mintedTTLSeconds: Int

    public var expiresAt: Date { issuedAt.addingTimeInterval(TimeInterval(ttlSeconds)) }

    /// Until when its consumption must be remembered: the longest any app setting could let it live
    /// (an operator raising the lifetime later must not make a consumed token fresh again).
    public var consumptionKeptUntil: Date {
        issuedAt.addingTimeInterval(TimeInterval(min(mintedTTLSeconds, ZToken.ttlRange.upperBound)))
    }
}

/// How a presented ztoken stands. Only `fresh` ones may be consumed.
public enum ZTokenState: String, Sendable, Codable, CaseIterable {
    case fresh, replayed, expired, forged, wrongApp, wrongEvent, wrongAccount
}

/// What device start hands a device to mint its ztokens with: the key, and the 24 context bytes
/// (app tag, device id, key epoch) every token carries so that the server can derive the key again.
public struct ZTokenDeviceKey: Sendable {
    public let key: SymmetricKey
    public let context: [UInt8]
}

/// The ztoken (format in `ZTokenFormat`): minted by the device with its own key, checked here with no
/// I/O. The key is derived from the master key, the app, the device and its key epoch, so a token
/// names everything the server needs to check it, and only a device that started holds its key.
public enum ZToken {
    public static let maxTextLength = 100
    public static let ttlRange: ClosedRange<Int> = 30...3600
    /// How far ahead of the server's clock a device's issue time may be (its clock is corrected by the
    /// server's time at start, which leaves the drift since).
    public static let clockSkew: TimeInterval = 300

    /// Names the app in every token, so that one shown to another app's backend is told apart from
    /// a forgery before any key is derived.
    public static func appTag(_ app: AppID, keys: ServerKeys) -> [UInt8] {
        keys.appTags.tag(for: app) { Array(ServerKeys.mac(keys.ztoken, ["app", app.description]).prefix(4)) }
    }

    public static func deviceKey(app: AppID, device: DeviceID, epoch: UInt32, keys: ServerKeys) -> ZTokenDeviceKey {
        let context = appTag(app, keys: keys) + device.bytes + withUnsafeBytes(of: epoch.bigEndian, Array.init)
        return ZTokenDeviceKey(key: deviceMACKey(app: app, device: device, epoch: epoch, keys: keys), context: context)
    }

    /// The device's key alone, which a check needs (the context is what the token already carries).
    static func deviceMACKey(app: AppID, device: DeviceID, epoch: UInt32, keys: ServerKeys) -> SymmetricKey {
        SymmetricKey(data: ServerKeys.mac(keys.ztokenDeviceRootKeyed, [app.description, device.rawValue, String(epoch)]))
    }

    /// A token minted by the server (`/v1/sdk/ztoken` and the bridge), as the device would mint it.
    public static func issue<R: RandomNumberGenerator>(
        app: AppID,
        device: DeviceID,
        epoch: UInt32,
        event: EventID,
        account: AccountID,
        ttlSeconds: Int,
        fromPage: Bool,
        at now: Date,
        keys: ServerKeys,
        using generator: inout R
    ) -> String {
        let deviceKey = deviceKey(app: app, device: device, epoch: epoch, keys: keys)
        return ZTokenFormat.mint(
            version: fromPage ? ZTokenFormat.pageVersion : ZTokenFormat.deviceVersion,
            tokenID: (0..<12).map { _ in UInt8.random(in: .min ... .max, using: &generator) },
            issuedAt: UInt32(clamping: Int(now.timeIntervalSince1970)),
            ttlSeconds: UInt16(clamping: ttlSeconds),
            event: event.rawValue,
            account: account.rawValue,
            context: deviceKey.context,
            key: deviceKey.key
        )
    }

    /// Checks a presented token against what the backend says it is for, with no I/O. A `fresh` result
    /// still has to be consumed atomically in the store; anything else is final. `maxTTL` is the app's
    /// ztoken lifetime: a device cannot mint itself a longer one.
    public static func check(
        _ text: String,
        app: AppID,
        event: EventID,
        account: AccountID,
        maxTTL: Int,
        at now: Date,
        keys: ServerKeys
    ) -> (state: ZTokenState, claims: ZTokenClaims?) {
        guard let fields = ZTokenFormat.open(text) else { return (.forged, nil) }
        // Another app's tag: that app's key would be needed to check the MAC, so the token is refused
        // as it stands, and nothing it names is trusted.
        guard constantTimeEquals(fields.appTag, appTag(app, keys: keys)) else { return (.wrongApp, nil) }
        let device = DeviceID(bytes: fields.deviceID)
        // One HMAC set-up for the device's key serves the MAC and the account tag.
        let proven = ProvenDeviceKeys.Device(app: app, device: fields.deviceID, epoch: fields.keyEpoch)
        let known = keys.provenDeviceKeys.key(for: proven)
        let keyed = known ?? HMAC<SHA256>(key: deviceMACKey(app: app, device: device, epoch: fields.keyEpoch, keys: keys))
        guard constantTimeEquals(ZTokenFormat.mac(fields.signedBytes, using: keyed), fields.mac),
            let eventID = try? EventID(validating: fields.eventID)
        else { return (.forged, nil) }
        if known == nil { keys.provenDeviceKeys.remember(keyed, for: proven) }
        let claims = ZTokenClaims(
            tokenID: Base64URL.encode(fields.tokenID),
            issuedAt: Date(timeIntervalSince1970: TimeInterval(fields.issuedAt)),
            ttlSeconds: min(Int(fields.ttlSeconds), maxTTL),
            eventID: eventID,
            deviceID: device,
            keyEpoch: fields.keyEpoch,
            fromPage: fields.version == ZTokenFormat.pageVersion,
            mintedTTLSeconds: Int(fields.ttlSeconds)
        )
        if claims.eventID != event { return (.wrongEvent, claims) }
        if !constantTimeEquals(fields.accountTag, ZTokenFormat.accountTag(account.rawValue, using: keyed)) {
            return (.wrongAccount, claims)
        }
        if now >= claims.expiresAt || claims.issuedAt > now.addingTimeInterval(clockSkew) { return (.expired, claims) }
        return (.fresh, claims)
    }
}
