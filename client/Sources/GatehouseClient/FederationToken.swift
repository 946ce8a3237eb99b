import Crypto
import Foundation
import GatehouseAPI

/// STS credentials as OSS's `OSSFederationToken` holds them (`tAccessKey`, `tSecretKey`, `tToken`,
/// `expirationTimeInGMTFormat`), from Gatehouse's `/v1/sts/token` answer.
public struct FederationToken: Sendable, Equatable {
    /// The seed refreshes when fewer than 5 minutes remain.
    public static let refreshMargin: TimeInterval = 300

    /// The temporary access key id (`tAccessKey`).
    public let accessKeyID: String
    /// The temporary secret (`tSecretKey`); never logged.
    public let accessKeySecret: String
    /// The session token (`tToken`), sent as `x-oss-security-token` or `x-amz-security-token`.
    public let securityToken: String
    /// `yyyy-MM-dd'T'HH:mm:ssZ`, UTC, as the SDK parses it.
    public let expirationInGMTFormat: String
    /// When the credentials stop working.
    public let expiration: Date

    init(_ answer: Components.Schemas.STSToken) throws {
        guard answer.statusCode == 200, let date = Gatehouse.parseDate(answer.expiration) else {
            throw GatehouseClientError.storage(statusCode: answer.statusCode, errorCode: "malformed_answer", message: "no expiration")
        }
        accessKeyID = answer.accessKeyId
        accessKeySecret = answer.accessKeySecret
        securityToken = answer.securityToken
        expirationInGMTFormat = answer.expiration
        self.expiration = date
    }
}

/// Token binding as the seed does it: the token's `pay` claim is base64(SHA-256(bound value)).
public enum AttestationBinding {
    /// The `pay` claim for `value`: base64 of its SHA-256, as the backend's introspection checks.
    public static func pay(_ value: String) -> String {
        Data(SHA256.hash(data: Array(value.utf8))).base64EncodedString()
    }
}
