import Crypto
import Foundation

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
    /// 12 random bytes, base64url: the row key of the issued token.
    public let tokenID: String
    public let issuedAt: Date
    public let ttlSeconds: Int
    public let eventID: EventID
    public let deviceID: DeviceID
    let appTag: [UInt8]
    let accountTag: [UInt8]

    public var expiresAt: Date { issuedAt.addingTimeInterval(TimeInterval(ttlSeconds)) }
}

/// How a presented ztoken stands. Only `fresh` ones may be consumed.
public enum ZTokenState: String, Sendable, Codable, CaseIterable {
    case fresh, replayed, expired, forged, wrongApp, wrongEvent, wrongAccount
}

/// The ztoken format: 64 bytes, 86 base64url characters, no padding.
///
/// ```
/// 0      version (1)
/// 1..12  token id (12 random bytes)
/// 13..16 issued at, Unix seconds, big endian
/// 17..18 time to live, seconds, big endian
/// 19     event id - 3300
/// 20..23 app tag     = HMAC(k, "app", appId)[0..<4]
/// 24..31 account tag = HMAC(k, "account", appId, accountId)[0..<8]
/// 32..47 device id (16)
/// 48..63 MAC         = HMAC-SHA256(k, bytes 0..<48)[0..<16]
/// ```
/// The MAC covers everything, so a forged or altered token fails before any lookup, and the tags let
/// a valid token's bindings be checked without a database read either.
public enum ZToken {
    static let version: UInt8 = 1
    static let byteCount = 64
    public static let maxTextLength = 100
    public static let ttlRange: ClosedRange<Int> = 30...3600

    public static func issue<R: RandomNumberGenerator>(
        app: AppID,
        device: DeviceID,
        event: EventID,
        account: AccountID,
        ttlSeconds: Int,
        at now: Date,
        key: SymmetricKey,
        using generator: inout R
    ) -> (token: String, claims: ZTokenClaims) {
        let tokenID = (0..<12).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let issued = UInt32(clamping: Int(now.timeIntervalSince1970))
        var bytes: [UInt8] = [version] + tokenID
        bytes += withUnsafeBytes(of: issued.bigEndian, Array.init)
        bytes += withUnsafeBytes(of: UInt16(clamping: ttlSeconds).bigEndian, Array.init)
        bytes.append(UInt8(event.rawValue - EventID.range.lowerBound))
        bytes += appTag(app, key: key)
        bytes += accountTag(app, account, key: key)
        bytes += device.bytes
        bytes += mac(bytes, key: key)
        let claims = ZTokenClaims(
            tokenID: Base64URL.encode(tokenID),
            issuedAt: Date(timeIntervalSince1970: TimeInterval(issued)),
            ttlSeconds: ttlSeconds,
            eventID: event,
            deviceID: device,
            appTag: appTag(app, key: key),
            accountTag: accountTag(app, account, key: key)
        )
        return (Base64URL.encode(bytes), claims)
    }

    /// Checks a presented token against what the backend says it is for, with no I/O. A `fresh` result
    /// still has to be consumed atomically in the store; anything else is final.
    public static func check(
        _ text: String,
        app: AppID,
        event: EventID,
        account: AccountID,
        at now: Date,
        key: SymmetricKey
    ) -> (state: ZTokenState, claims: ZTokenClaims?) {
        guard text.utf8.count <= maxTextLength, let bytes = Base64URL.decode(text), bytes.count == byteCount, bytes[0] == version
        else { return (.forged, nil) }
        let body = Array(bytes[0..<48])
        guard constantTimeEquals(mac(body, key: key), bytes[48..<64]) else { return (.forged, nil) }
        let issued = bytes[13..<17].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let ttl = bytes[17..<19].reduce(UInt16(0)) { $0 << 8 | UInt16($1) }
        guard let eventID = try? EventID(validating: EventID.range.lowerBound + Int(bytes[19])) else { return (.forged, nil) }
        let claims = ZTokenClaims(
            tokenID: Base64URL.encode(bytes[1..<13]),
            issuedAt: Date(timeIntervalSince1970: TimeInterval(issued)),
            ttlSeconds: Int(ttl),
            eventID: eventID,
            deviceID: DeviceID(bytes: Array(bytes[32..<48])),
            appTag: Array(bytes[20..<24]),
            accountTag: Array(bytes[24..<32])
        )
        if !constantTimeEquals(claims.appTag, appTag(app, key: key)) { return (.wrongApp, claims) }
        if claims.eventID != event { return (.wrongEvent, claims) }
        if !constantTimeEquals(claims.accountTag, accountTag(app, account, key: key)) { return (.wrongAccount, claims) }
        if now >= claims.expiresAt { return (.expired, claims) }
        return (.fresh, claims)
    }

    static func mac(_ bytes: [UInt8], key: SymmetricKey) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: bytes, using: key).prefix(16))
    }

    static func appTag(_ app: AppID, key: SymmetricKey) -> [UInt8] {
        Array(ServerKeys.mac(key, ["app", app.description]).prefix(4))
    }

    static func accountTag(_ app: AppID, _ account: AccountID, key: SymmetricKey) -> [UInt8] {
        Array(ServerKeys.mac(key, ["account", app.description, account.rawValue]).prefix(8))
    }
}

/// An issued ztoken as stored: the row the first risk query consumes.
public struct IssuedZToken: Equatable, Sendable {
    public let appID: AppID
    public let claims: ZTokenClaims
    public let accountID: AccountID
    public let issuedFrom: String?
    /// The H5 page that asked for it, for tokens issued through the bridge.
    public let pageURL: String?

    public init(appID: AppID, claims: ZTokenClaims, accountID: AccountID, issuedFrom: String?, pageURL: String?) {
        self.appID = appID
        self.claims = claims
        self.accountID = accountID
        self.issuedFrom = issuedFrom
        self.pageURL = pageURL
    }
}
