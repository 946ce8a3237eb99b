import Crypto
import Foundation

/// One `AssumeRole` call as it goes over the wire: built here, sent by the server's HTTP client.
public struct AssumeRoleCall: Equatable, Sendable {
    public let url: String
    public let headers: [(String, String)]
    public let body: String

    public static func == (lhs: AssumeRoleCall, rhs: AssumeRoleCall) -> Bool {
        lhs.url == rhs.url && lhs.body == rhs.body && lhs.headers.elementsEqual(rhs.headers, by: ==)
    }
}

/// Why an upstream answer gave no credentials.
public enum UpstreamFailure: Error, Equatable, Sendable {
    /// The provider refused (4xx) with its error code, such as `AccessDenied` or `SignatureDoesNotMatch`.
    case refused(status: Int, code: String)
    /// A 5xx or a timeout: worth retrying.
    case unavailable(String)
    /// A 2xx whose body is not the documented response.
    case garbled(String)

    public var retryable: Bool { if case .unavailable = self { true } else { false } }
}

/// `AssumeRole` on both providers: the signed request and the reading of the answer.
public enum AssumeRole {
    /// What every call needs besides the role: who is asking and for what policy.
    public struct Parameters: Equatable, Sendable {
        public let sessionName: String
        public let policy: String?
        public let durationSeconds: Int

        public init(sessionName: String, policy: String?, durationSeconds: Int) {
            self.sessionName = sessionName
            self.policy = policy
            self.durationSeconds = durationSeconds
        }
    }

    /// `RoleSessionName`: 2 to 64 of `[\w+=,.@-]`, naming the device so that the provider's own logs
    /// say who held the credentials.
    public static func sessionName(deviceID: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+=,.@-".utf8)
        let kept = String(decoding: deviceID.utf8.filter(allowed.contains).prefix(48), as: UTF8.self)
        return "gatehouse-" + (kept.isEmpty ? "device" : kept)
    }

    /// AWS query API: a form-encoded POST to the endpoint's root, SigV4-signed for service `sts`.
    public static func aws(role: STSRole, key: UpstreamKey, parameters: Parameters, now: Date) -> AssumeRoleCall {
        var form = [
            ("Action", "AssumeRole"), ("Version", "2011-06-15"), ("RoleArn", role.roleArn), ("RoleSessionName", parameters.sessionName),
            ("DurationSeconds", String(parameters.durationSeconds)),
        ]
        if let policy = parameters.policy { form.append(("Policy", policy)) }
        if let externalID = role.externalID { form.append(("ExternalId", externalID)) }
        let body = form.map { "\(URIEncoding.formEncode($0.0))=\(URIEncoding.formEncode($0.1))" }.joined(separator: "&")
        // STSRole.validated() refuses a role whose stsEndpoint does not read.
        let endpoint = StorageEndpoint(url: role.stsEndpoint, addressing: .path)!
        let time = UTCTime(now)
        let payloadHash = Hex.encode(SHA256.hash(data: Array(body.utf8)))
        let contentType = "application/x-www-form-urlencoded; charset=utf-8"
        let signed = [("host", endpoint.host), ("content-type", contentType), ("x-amz-date", time.compact)]
        let scope = SigV4.Scope(day: time.day8, region: role.region, service: "sts")
        let canonical = SigV4.canonicalRequest(method: "POST", path: "/", query: [], headers: signed, payloadHash: payloadHash)
        let signature = SigV4.signature(
            stringToSign: SigV4.stringToSign(canonicalRequest: canonical.request, amzDate: time.compact, scope: scope),
            secret: key.accessKeySecret,
            scope: scope
        )
        let authorization = SigV4.authorization(
            accessKeyID: key.accessKeyID,
            scope: scope,
            signedHeaders: canonical.signedHeaders,
            signature: signature
        )
        return AssumeRoleCall(
            url: "\(endpoint.scheme)://\(endpoint.host)/",
            headers: [("Content-Type", contentType), ("X-Amz-Date", time.compact), ("Authorization", authorization)],
            body: body
        )
    }

    /// Alibaba RPC: every parameter in a form-encoded POST, signed with the RPC signature (`POST`).
    public static func alibaba(role: STSRole, key: UpstreamKey, parameters: Parameters, nonce: String, now: Date) -> AssumeRoleCall {
        var form = [
            "Action": "AssumeRole", "Version": "2015-04-01", "Format": "JSON", "AccessKeyId": key.accessKeyID,
            "SignatureMethod": "HMAC-SHA1", "SignatureVersion": "1.0", "SignatureNonce": nonce, "Timestamp": UTCTime(now).iso8601,
            "RoleArn": role.roleArn, "RoleSessionName": parameters.sessionName, "DurationSeconds": String(parameters.durationSeconds),
        ]
        if let policy = parameters.policy { form["Policy"] = policy }
        if let externalID = role.externalID { form["ExternalId"] = externalID }
        form["Signature"] = AlibabaRPCSignature.signature(method: "POST", parameters: form, secret: key.accessKeySecret)
        // STSRole.validated() refuses a role whose stsEndpoint does not read.
        let endpoint = StorageEndpoint(url: role.stsEndpoint, addressing: .path)!
        return AssumeRoleCall(
            url: "\(endpoint.scheme)://\(endpoint.host)/",
            headers: [("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")],
            body: AlibabaRPCSignature.canonicalQuery(form) + "&Signature=" + URIEncoding.encode(form["Signature"]!)
        )
    }

    /// Reads AWS's XML answer (`AssumeRoleResponse`, or `ErrorResponse`).
    public static func readAWS(status: Int, body: String) -> Result<TemporaryCredentials, UpstreamFailure> {
        if status >= 500 { return .failure(.unavailable("HTTP \(status)")) }
        if status >= 400 { return .failure(.refused(status: status, code: XMLText.first("Code", in: body) ?? "HTTP\(status)")) }
        guard let credentials = XMLText.first("Credentials", in: body),
            let id = XMLText.first("AccessKeyId", in: credentials), let secret = XMLText.first("SecretAccessKey", in: credentials),
            let token = XMLText.first("SessionToken", in: credentials), let expiration = XMLText.first("Expiration", in: credentials)
        else { return .failure(.garbled("no Credentials in the AssumeRole answer")) }
        return temporary(id, secret, token, expiration)
    }

    /// Reads Alibaba's JSON answer (`Credentials`, or `Code` and `Message`).
    public static func readAlibaba(status: Int, body: String) -> Result<TemporaryCredentials, UpstreamFailure> {
        if status >= 500 { return .failure(.unavailable("HTTP \(status)")) }
        let object = JSONValue.parse(Array(body.utf8))?.object
        if status >= 400 { return .failure(.refused(status: status, code: object?["Code"]?.string ?? "HTTP\(status)")) }
        guard let credentials = object?["Credentials"]?.object, let id = credentials["AccessKeyId"]?.string,
            let secret = credentials["AccessKeySecret"]?.string, let token = credentials["SecurityToken"]?.string,
            let expiration = credentials["Expiration"]?.string
        else { return .failure(.garbled("no Credentials in the AssumeRole answer")) }
        return temporary(id, secret, token, expiration)
    }

    private static func temporary(
        _ id: String,
        _ secret: String,
        _ token: String,
        _ expiration: String
    ) -> Result<TemporaryCredentials, UpstreamFailure> {
        guard !id.isEmpty, !secret.isEmpty, !token.isEmpty, let expires = RFC3339.parse(expiration) else {
            return .failure(.garbled("empty credentials or an unreadable Expiration"))
        }
        return .success(TemporaryCredentials(accessKeyID: id, accessKeySecret: secret, securityToken: token, expiration: expires))
    }
}

/// Just enough XML for AWS's query-API answers: the text of the first `<name>` element, entities
/// decoded. A full parser would accept far more than these fixed documents ever contain.
enum XMLText {
    static func first(_ name: String, in xml: String) -> String? {
        guard let open = xml.range(of: "<\(name)>"), let close = xml.range(of: "</\(name)>", range: open.upperBound..<xml.endIndex) else {
            return nil
        }
        return decode(String(xml[open.upperBound..<close.lowerBound]))
    }

    static func decode(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var result = text
        for (entity, character) in [
            ("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&apos;", "'"), ("&#xD;", "\r"), ("&#13;", "\r"), ("&amp;", "&"),
        ] {
            result = result.replacingOccurrences(of: entity, with: character)
        }
        return result
    }
}
