import Crypto
import Foundation
import GatehouseCore
import GatehouseTestSupport
import HTTPTypes
import Hummingbird
import NIOCore

/// An AWS-style STS on a loopback port for the vending tests: it checks each `AssumeRole` call's
/// SigV4 signature against the key it was given, remembers the calls (the form, to read the
/// session policy sent), and answers as told (credentials, 5xx, a refusal, garbage).
/// The real peer is moto in tests/interop/sts_interop.py; this one can fail on purpose and count.
actor StubSTS {
    enum Mode: Sendable { case credentials, unavailable, refuse, garbage, shortLived, redirect }

    let accessKeyID: String
    let secret: String
    /// The clock expirations count from: the server's, when a test moves it.
    let clock: any GatehouseClock
    var mode = Mode.credentials
    private(set) var calls: [[String: String]] = []
    private var issued = 0

    init(accessKeyID: String, secret: String, clock: any GatehouseClock = SystemClock()) {
        self.accessKeyID = accessKeyID
        self.secret = secret
        self.clock = clock
    }

    func set(_ mode: Mode) { self.mode = mode }
    var callCount: Int { calls.count }

    func answer(headers: [String: String], body: String) -> (Int, String) {
        var form: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            form[parts[0]] = parts.count == 2 ? parts[1] : ""
        }
        calls.append(form)
        guard signatureHolds(headers: headers, body: body) else {
            return (403, "<ErrorResponse><Error><Code>SignatureDoesNotMatch</Code><Message>no</Message></Error></ErrorResponse>")
        }
        switch mode {
        case .unavailable: return (503, "busy")
        case .refuse:
            return (403, "<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>denied</Message></Error></ErrorResponse>")
        case .garbage: return (200, "<html>hello</html>")
        case .redirect: return (307, "")
        case .credentials, .shortLived:
            issued += 1
            let seconds = mode == .shortLived ? 120 : Double(form["DurationSeconds"] ?? "3600") ?? 3600
            let expiration = UTCTime(clock.now().addingTimeInterval(seconds)).iso8601
            return (
                200,
                """
                <AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials>
                <AccessKeyId>ASIASTUB\(issued)</AccessKeyId><SecretAccessKey>stub/secret+\(issued)</SecretAccessKey>
                <SessionToken>token&amp;\(issued)</SessionToken><Expiration>\(expiration)</Expiration></Credentials>
                </AssumeRoleResult></AssumeRoleResponse>
                """
            )
        }
    }

    /// Recomputes the SigV4 signature of the call from its parts.
    private func signatureHolds(headers: [String: String], body: String) -> Bool {
        guard let authorization = headers["authorization"], let date = headers["x-amz-date"],
            authorization.hasPrefix("AWS4-HMAC-SHA256 Credential=\(accessKeyID)/")
        else { return false }
        let scopeParts = authorization.dropFirst("AWS4-HMAC-SHA256 Credential=\(accessKeyID)/".count).prefix { $0 != "," }.split(separator: "/")
        guard scopeParts.count == 4, scopeParts[2] == "sts" else { return false }
        let scope = SigV4.Scope(day: String(scopeParts[0]), region: String(scopeParts[1]), service: "sts")
        let signed = ["content-type", "host", "x-amz-date"].map { ($0, headers[$0] ?? "") }
        let canonical = SigV4.canonicalRequest(
            method: "POST",
            path: "/",
            query: [],
            headers: signed,
            payloadHash: Hex.encode(SHA256.hash(data: Array(body.utf8)))
        )
        let expected = SigV4.signature(
            stringToSign: SigV4.stringToSign(canonicalRequest: canonical.request, amzDate: date, scope: scope),
            secret: secret,
            scope: scope
        )
        return authorization.hasSuffix("Signature=\(expected)")
    }

    /// Serves until `body` returns; `body` gets the base URL.
    func serve(_ body: @Sendable (String) async throws -> Void) async throws {
        let router = Router()
        router.post("/") { request, _ -> Response in
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            // HTTP/1's Host arrives as the request's authority.
            headers["host"] = request.head.authority
            let text = String(buffer: try await request.body.collect(upTo: 1 << 20))
            let (status, answer) = await self.answer(headers: headers, body: text)
            // A redirect points back here: following it would be a second call.
            let answerHeaders: HTTPFields = status == 307 ? [.location: "/"] : [:]
            return Response(status: .init(code: status), headers: answerHeaders, body: .init(byteBuffer: ByteBuffer(string: answer)))
        }
        try await withLoopbackServer(router) { url in try await body(url.absoluteString) }
    }
}
