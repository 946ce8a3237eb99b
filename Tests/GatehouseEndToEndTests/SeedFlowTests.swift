import Foundation
import GatehouseClient
import GatehouseTestSupport
import Hummingbird
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Each seed's flow through `GatehouseClient` alone, against the built `gatehouse` executable on both
/// stores, with the real peers the flows meet: nginx's auth_request in front of an app's API, and
/// moto's STS and S3 (authentication on) with boto3 uploading on the vended credentials. The app's
/// backend and the operator are plain HTTP (and the client's backend and admin clients where they
/// cover the call). One case at a time: each starts a server process (and some nginx or moto), which
/// would otherwise all start at once beside the rest of the suite on a small machine.
@Suite(.serialized) struct SeedFlowTests {
    static func gatehouse(_ server: BuiltServer, _ app: RegisteredApp, logs: Lines? = nil) -> Gatehouse {
        Gatehouse(
            .init(
                baseURL: server.baseURL,
                appKey: app.appKey,
                secretKey: app.secretKey,
                clientDeviceID: "end-to-end-phone",
                logLevel: logs == nil ? .none : .debug,
                logSink: { _, line in logs?.append(line) }
            )
        )
    }

    static func backend(_ server: BuiltServer, _ app: RegisteredApp) -> GatehouseBackendClient {
        GatehouseBackendClient(serverURL: server.baseURL, appKey: app.appKey, serverSecret: app.serverSecret)
    }

    /// What a closure saw, safely from any thread.
    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func append(_ line: String) { lock.withLock { lines.append(line) } }
        var all: [String] { lock.withLock { lines } }
    }

    static func createAttester(_ server: BuiltServer, _ app: RegisteredApp, _ json: String) async throws {
        let created = try await server.admin(.POST, "v1/admin/apps/\(app.appKey)/attesters", json)
        #expect(created.status == 201, "\(created.body)")
    }

    // MARK: device risk (start, ztoken, the backend's risk query)

    @Test(arguments: TestStoreKind.available)
    func deviceRisk(kind: TestStoreKind) async throws {
        try await BuiltServer.with(kind) { server in
            let app = try await RegisteredApp.create(server)
            let logs = Lines()
            let client = Self.gatehouse(server, app, logs: logs)
            let ready = Lines()
            await client.onReady { device in ready.append(device) }
            #expect(throws: GatehouseClientError.notStarted) { try client.zToken(event: 3301, account: "alice") }
            let device = try await client.start()
            try await client.start()
            #expect(ready.all == [device], "the ready handler runs once")

            // Minted on the device, synchronously, with no request: the server sees it first in the query.
            let ztoken = try client.zToken(event: 3301, account: "alice")
            #expect(ztoken.count < 100)
            #expect(try client.zToken(event: 3301, account: "alice") != ztoken, "ztokens are never cached")
            let backend = Self.backend(server, app)
            let decision = try await backend.queryRisk(ztoken: ztoken, eventID: 3301, accountID: "alice", clientIP: "127.0.0.1")
            #expect(decision.tokenState.rawValue == "fresh" && decision.deviceId == device && decision.tags.isEmpty, "\(decision.tags)")
            let replayed = try await backend.queryRisk(ztoken: ztoken, eventID: 3301, accountID: "alice", clientIP: "127.0.0.1")
            #expect(replayed.tokenState.rawValue == "replayed")
            // Another address than the device started from is tagged; the wrong account is refused.
            let moved = try await backend.queryRisk(
                ztoken: try client.zToken(event: 3301, account: "alice"),
                eventID: 3301,
                accountID: "alice",
                clientIP: "203.0.113.7"
            )
            #expect(moved.tokenState.rawValue == "fresh" && moved.tags.map(\.tag) == ["network.ip_changed"])
            let stolen = try await backend.queryRisk(
                ztoken: try client.zToken(event: 3301, account: "alice"),
                eventID: 3301,
                accountID: "mallory",
                clientIP: "127.0.0.1"
            )
            #expect(stolen.tokenState.rawValue == "wrongAccount")
            // A server-minted token has the same format and the same single use.
            let minted = try await client.serverZToken(event: 3301, account: "alice")
            #expect(
                try await backend.queryRisk(ztoken: minted, eventID: 3301, accountID: "alice", clientIP: "127.0.0.1").tokenState.rawValue == "fresh"
            )
            #expect(throws: GatehouseClientError.self) { try client.zToken(event: 3399, account: "alice") }
            // The H5 bridge, offline too; through the server it also notes the page.
            let fromPage = try client.bridgeZToken(
                pageJSON: #"{"eventId":"3301","page":"cart"}"#,
                pageURL: "https://shop.example/cart",
                account: "alice"
            )
            let bridged = try await backend.queryRisk(ztoken: fromPage, eventID: 3301, accountID: "alice", clientIP: "127.0.0.1")
            #expect(bridged.tokenState.rawValue == "fresh" && bridged.pageUrl == nil)
            #expect(throws: GatehouseClientError.self) { try client.bridgeZToken(pageJSON: "{}", pageURL: "https://shop.example", account: "alice") }
            #expect(throws: GatehouseClientError.self) {
                try client.bridgeZToken(pageJSON: #"{"eventId":3301}"#, pageURL: "javascript:alert(1)", account: "alice")
            }
            let noted = try await client.serverBridgeZToken(
                pageJSON: #"{"eventId":3301}"#,
                pageURL: "https://shop.example/pay",
                clientID: "cuid-1",
                account: "alice"
            )
            let fromServer = try await backend.queryRisk(ztoken: noted, eventID: 3301, accountID: "alice", clientIP: "127.0.0.1")
            #expect(fromServer.tokenState.rawValue == "fresh" && fromServer.pageUrl == "https://shop.example/pay")
            #expect(logs.all.contains { $0.contains("device started") } && !logs.all.joined().contains(ztoken))
        }
    }

    // MARK: app protection (signed POST, challenged, cptCheck, captcha pass, retry)

    @Test(arguments: TestStoreKind.available)
    func appProtection(kind: TestStoreKind) async throws {
        try await BuiltServer.with(kind) { server in
            let app = try await RegisteredApp.create(server)
            let client = Self.gatehouse(server, app)
            let device = try await client.start()
            // The operator puts the device on the challenge list: its next signed request is challenged.
            let listed = try await server.admin(
                .POST,
                "v1/admin/apps/\(app.appKey)/risk/lists",
                #"{"list":"challenge","type":"device","value":"\#(device)"}"#
            )
            #expect(listed.status == 201, "\(listed.body)")

            var request = URLRequest(url: URL(string: "https://api.example.com/v1/transfer")!)
            request.httpMethod = "POST"
            request.httpBody = Data(#"{"amount":100}"#.utf8)
            try await client.requestSigner().sign(&request)
            let challenged = try await Self.verify(server, app, request)
            let marker = try #require(challenged["marker"] as? [String: Any], "\(challenged)")
            // The app's API answers with the marker; the app's cptCheck recognises it either way.
            let markerBody = try JSONSerialization.data(withJSONObject: try #require(marker["body"] as? [String: Any]))
            #expect(Gatehouse.cptCheck(cookie: marker["cookie"] as? String, body: nil) == 1)
            #expect(Gatehouse.cptCheck(cookie: nil, body: markerBody) == 1)
            #expect(Gatehouse.cptCheck(cookie: "session=1", body: Data("{}".utf8)) == 0)

            // The user slides the puzzle (the page's calls; the gap comes from the database, the test's oracle).
            let pass = try await Self.solveCaptcha(server, app, device: device)

            var retry = URLRequest(url: request.url!)
            retry.httpMethod = "POST"
            retry.httpBody = request.httpBody
            try await client.requestSigner().sign(&retry)
            let allowed = try await Self.verify(server, app, retry, captchaPassToken: pass)
            #expect(allowed["verdict"] as? String == "allow" && allowed["captchaPassAccepted"] as? Bool == true, "\(allowed)")
        }
    }

    /// The app's backend asks Gatehouse about a signed request it received.
    static func verify(
        _ server: BuiltServer,
        _ app: RegisteredApp,
        _ request: URLRequest,
        captchaPassToken: String? = nil
    ) async throws -> [String: Any] {
        var fields: [String: Any] = [
            "method": request.httpMethod ?? "GET", "url": request.url!.absoluteString,
            "body": String(decoding: request.httpBody ?? Data(), as: UTF8.self),
        ]
        fields["wtoken"] = request.value(forHTTPHeaderField: "wToken")
        fields["whash"] = request.value(forHTTPHeaderField: "ali_sign_whash")
        fields["captchaPassToken"] = captchaPassToken
        let json = String(decoding: try JSONSerialization.data(withJSONObject: fields), as: UTF8.self)
        let verified = try await app.backend(server, "v1/signatures/verify", json)
        #expect(verified.status == 200, "\(verified.body)")
        return verified.json ?? [:]
    }

    static func solveCaptcha(_ server: BuiltServer, _ app: RegisteredApp, device: String) async throws -> String {
        let created = try await HTTP.send(
            .POST,
            server.baseURL.appendingPathComponent("v1/captcha/challenges"),
            json: #"{"appKey":"\#(app.appKey)","deviceId":"\#(device)"}"#
        )
        let id = try #require(created.json?["challengeId"] as? String, "\(created.body)")
        let gap = try await captchaAnswer(server.database.location, appKey: app.appKey, challengeID: id)
        let points = DragSamples.human(to: Double(gap.x))
        let trajectory = points.map { #"{"x":\#($0.x),"y":\#($0.y),"t":\#($0.t)}"# }.joined(separator: ",")
        let answered = try await HTTP.send(
            .POST,
            server.baseURL.appendingPathComponent("v1/captcha/challenges/\(id)/answers"),
            json: #"{"appKey":"\#(app.appKey)","position":\#(gap.x),"durationMs":\#(points.last!.t + 30),"trajectory":[\#(trajectory)]}"#
        )
        return try #require(answered.json?["passToken"] as? String, "\(answered.body)")
    }

    // MARK: attestation JWT with token binding and prefetch

    @Test(arguments: TestStoreKind.available)
    func attestationTokensAndBinding(kind: TestStoreKind) async throws {
        try await BuiltServer.with(kind) { server in
            let app = try await RegisteredApp.create(server)
            try await Self.createAttester(
                server,
                app,
                #"{"attestId":"login-pow","pow":{"maxNumber":2000},"bindHeader":"Authorization","adaptive":false}"#
            )
            try await Self.createAttester(
                server,
                app,
                #"{"attestId":"pay-v2","pow":{"format":"altcha-v2","cost":20,"keyPrefix":"0"},"adaptive":false}"#
            )
            let client = Self.gatehouse(server, app)
            try await client.start()

            await client.bind(value: "Bearer user-1")
            try await client.prefetch(attestID: "login-pow")
            let bound = try await client.attestationToken(attestID: "login-pow")
            #expect(bound.header == "EO-Attest-Token" && bound.boundValue == "Bearer user-1")
            #expect(try await client.attestationToken(attestID: "login-pow") == bound, "the prefetched token is handed out")
            #expect(try await Self.introspect(server, app, bound.token, boundValue: "Bearer user-1")["active"] as? Bool == true)
            let mismatch = try await Self.introspect(server, app, bound.token, boundValue: "Bearer someone-else")
            #expect(mismatch["active"] as? Bool == false, "\(mismatch)")

            // A new binding drops the old token: the next one carries the new value's hash.
            await client.bind(value: "Bearer user-2")
            let rebound = try await client.attestationToken(attestID: "login-pow")
            #expect(rebound.token != bound.token && rebound.boundValue == "Bearer user-2")
            #expect(try await Self.introspect(server, app, rebound.token, boundValue: "Bearer user-2")["active"] as? Bool == true)

            // ALTCHA v2 (PBKDF2) challenges are solved too; an unknown attester is an error, not a hang.
            await client.bind(value: nil)
            let v2 = try await client.attest(attestID: "pay-v2")
            #expect(v2.boundValue == nil && v2.expiresAt > Date())
            await #expect(throws: GatehouseClientError.self) { try await client.attest(attestID: "no-such-attester") }
        }
    }

    static func introspect(_ server: BuiltServer, _ app: RegisteredApp, _ token: String, boundValue: String) async throws -> [String: Any] {
        let checked = try await app.backend(
            server,
            "v1/attest/introspect",
            #"{"token":"\#(token)","attestId":"login-pow","boundValue":"\#(boundValue)"}"#
        )
        #expect(checked.status == 200, "\(checked.body)")
        return checked.json ?? [:]
    }

    // MARK: attestation through nginx (request -> 428 -> attest -> retry -> 200)

    @Test(.enabled(if: Peers.required || Peers.nginxAvailable), arguments: TestStoreKind.available)
    func attestationThroughNginx(kind: TestStoreKind) async throws {
        try await BuiltServer.with(kind) { server in
            let app = try await RegisteredApp.create(server)
            try await Self.createAttester(
                server,
                app,
                #"{"attestId":"api-pow","pow":{"maxNumber":2000},"adaptive":false,"routes":[{"method":"*","pathPrefix":"/api/"}]}"#
            )
            let client = Self.gatehouse(server, app)
            try await client.start()

            let hits = Lines()
            let router = Router()
            router.get("api/orders") { _, _ in
                hits.append("orders")
                return "upstream ok"
            }
            try await withLoopbackServer(router) { appAPI in
                try await Peers.withNginx(gatehouse: [server.baseURL], appAPI: appAPI, credentials: app.backendCredentials) { gate, _ in
                    let request = URLRequest(url: gate.appendingPathComponent("api/orders"))
                    let bare = try await HTTP.send(request)
                    #expect(bare.status == 428 && bare.headers.first(name: "EO-Attest-Challenge") == "api-pow", "\(bare)")
                    #expect(hits.all.isEmpty, "nginx kept the unattested request from the app's API")

                    let (data, response) = try await AttestingSession(gatehouse: client).data(for: request)
                    #expect(response.statusCode == 200 && String(decoding: data, as: UTF8.self) == "upstream ok")
                    #expect(hits.all == ["orders"])
                }
            }
        }
    }

    // MARK: STS credentials, then boto3 against moto

    @Test(.enabled(if: Peers.required || Peers.motoAvailable), arguments: TestStoreKind.available)
    func federationTokenUploadsToMoto(kind: TestStoreKind) async throws {
        try await BuiltServer.with(kind) { server in
            let app = try await RegisteredApp.create(server)
            try await Self.createAttester(server, app, #"{"attestId":"upload-pow","pow":{"maxNumber":2000},"adaptive":false}"#)
            let client = Self.gatehouse(server, app)
            try await client.start()
            // The device's account comes from the backend's risk query, as in the STS seed's flow.
            let ztoken = try client.zToken(event: 3301, account: "alice")
            _ = try await Self.backend(server, app).queryRisk(ztoken: ztoken, eventID: 3301, accountID: "alice", clientIP: "203.0.113.7")

            try await Peers.withMoto { moto, accessKey, secret, roleArn in
                let template =
                    #"{\"Version\":\"2012-10-17\",\"Statement\":[{\"Effect\":\"Allow\",\"Action\":[\"s3:GetObject\",\"s3:PutObject\"],\"Resource\":\"arn:aws:s3:::photos/users/${accountId}/*\"}]}"#
                let role = try await server.admin(
                    .POST,
                    "v1/admin/apps/\(app.appKey)/roles",
                    #"{"roleId":"uploads","provider":"aws","stsEndpoint":"\#(moto.absoluteString)","region":"us-east-1","roleArn":"\#(roleArn)","#
                        + #""attestId":"upload-pow","accessKeyId":"\#(accessKey)","accessKeySecret":"\#(secret)","policyTemplate":"\#(template)"}"#
                )
                #expect(role.status == 201, "\(role.body)")

                let token = try await client.federationToken(roleID: "uploads", attestID: "upload-pow")
                #expect(token.accessKeyID.hasPrefix("ASIA") && token.expiration.timeIntervalSinceNow > 300)
                #expect(try await client.federationToken(roleID: "uploads", attestID: "upload-pow") == token, "reused while 5 minutes remain")

                let upload = try Peers.python(
                    ["-c", Self.boto3Upload, moto.absoluteString],
                    environment: ["STS_ACCESS_KEY_ID": token.accessKeyID, "STS_SECRET": token.accessKeySecret, "STS_TOKEN": token.securityToken]
                )
                #expect(upload.status == 0, "\(upload.errors)")
                #expect(
                    upload.output.split(separator: "\n") == ["read back: from the client", "outside the prefix: AccessDenied"],
                    "\(upload.output)"
                )
            }
        }
    }

    /// boto3 with the vended credentials: write and read under the account's prefix, then try elsewhere.
    static let boto3Upload = """
        import os, sys, boto3, botocore
        from botocore.config import Config
        s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
                          aws_access_key_id=os.environ["STS_ACCESS_KEY_ID"], aws_secret_access_key=os.environ["STS_SECRET"],
                          aws_session_token=os.environ["STS_TOKEN"], config=Config(s3={"addressing_style": "path"}))
        s3.put_object(Bucket="photos", Key="users/alice/from-client.txt", Body=b"from the client")
        print("read back:", s3.get_object(Bucket="photos", Key="users/alice/from-client.txt")["Body"].read().decode())
        try:
            s3.put_object(Bucket="photos", Key="public/from-client.txt", Body=b"x")
            print("outside the prefix: allowed")
        except botocore.exceptions.ClientError as error:
            print("outside the prefix:", error.response["Error"]["Code"])
        """
}
