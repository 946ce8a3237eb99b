import Benchmark
import Crypto
import CryptoExtras
import Foundation
import GatehouseCore

// What one request costs in Core, alone: the cryptography and parsing of each hot path, without
// HTTP, JSON coders or the database. bench/run measures the whole request; these say which part of
// it is Core's. Each benchmark's inputs are made once, outside the measurement.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        maxDuration: .seconds(2),
        maxIterations: 100_000
    )
    zTokenBenchmarks()
    sdkSignatureBenchmarks()
    attestationTokenBenchmarks()
    proofOfWorkBenchmarks()
    storageSigningBenchmarks()
    policyRuleBenchmarks()
}

let now = Date(timeIntervalSince1970: 1_800_000_000)
let serverKey = SymmetricKey(size: .bits256)
let serverKeys = ServerKeys(box: try! SecretBox(masterKey: Array(repeating: 9, count: 32)))
let appID = AppID(UUID())
let device = DeviceID(bytes: Array(0..<16))

func zTokenBenchmarks() {
    let event = try! EventID(validating: 3300)
    let account = try! AccountID(validating: "account-1")
    func mint() -> String {
        var generator = SystemRandomNumberGenerator()
        return ZToken.issue(
            app: appID,
            device: device,
            epoch: 0,
            event: event,
            account: account,
            ttlSeconds: 300,
            fromPage: false,
            at: now,
            keys: serverKeys,
            using: &generator
        )
    }
    let issued = mint()
    let forged = String(issued.dropLast(2)) + (issued.hasSuffix("AA") ? "BB" : "AA")

    Benchmark("ztoken mint") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(mint())
        }
    }
    Benchmark("ztoken verify (fresh)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(ZToken.check(issued, app: appID, event: event, account: account, maxTTL: 300, at: now, keys: serverKeys))
        }
    }
    Benchmark("ztoken verify (forged)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(ZToken.check(forged, app: appID, event: event, account: account, maxTTL: 300, at: now, keys: serverKeys))
        }
    }
}

func sdkSignatureBenchmarks() {
    let box = try! SecretBox(masterKey: Array(repeating: 7, count: 32))
    let app = App(
        id: appID,
        appKey: try! AppKey(validating: "abcde"),
        name: "bench",
        platforms: [.ios],
        status: .active,
        createdAt: now,
        updatedAt: now
    )
    let secret = "sdk-secret-of-the-app-0123456789"
    let sealed = SealedSecret.seal(secret, appID: appID, kind: .sdk, version: 1, at: now, box: box)
    let body = Array(#"{"eventId":3300,"account":"account-1","ttlSeconds":300}"#.utf8)
    let nonce = "bench-nonce-0123456789"
    let timestamp = Int(now.timeIntervalSince1970)
    let canonical = SDKSignedRequest.canonical(method: "POST", path: "/v1/sdk/ztoken", timestamp: timestamp, nonce: nonce, body: body)
    let signature = SDKSignedRequest.sign(canonical: canonical, secretKey: secret)

    Benchmark("SDK request signature verify") { benchmark in
        for _ in benchmark.scaledIterations {
            let request = try! SDKSignedRequest.parse(appKey: "abcde", timestamp: String(timestamp), nonce: nonce, signature: signature).get()
            blackHole(request.verify(method: "POST", path: "/v1/sdk/ztoken", body: body, app: app, secrets: [sealed], at: now, box: box))
        }
    }
}

func attestationTokenBenchmarks() {
    let signing = SigningKey.generate(at: now)
    let appKey = try! AppKey(validating: "abcde")
    let attester = Attester(
        appID: appID,
        attestID: try! AttestID(validating: "login-pow"),
        bindHeader: "Authorization",
        createdAt: now,
        updatedAt: now
    )
    let keys = AttestationVerificationKeys(published: [signing.kid: signing.published])
    let binding = AttestationToken.binding(of: "Bearer a")
    func issue() -> String {
        var generator = SystemRandomNumberGenerator()
        return AttestationToken.issue(
            issuer: "gatehouse",
            appKey: appKey,
            device: device,
            attester: attester,
            address: "198.18.0.1",
            binding: binding,
            at: now,
            signer: signing.signer,
            using: &generator
        ).token
    }
    let token = issue()

    Benchmark("JWT sign (ES256 attestation token)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(issue())
        }
    }
    Benchmark("JWT verify (ES256, bound)") { benchmark in
        for _ in benchmark.scaledIterations {
            let result = AttestationToken.verify(
                token,
                appKey: appKey,
                attestID: attester.attestID,
                boundValue: "Bearer a",
                requireBinding: true,
                keys: keys,
                at: now
            )
            precondition((try? result.get()) != nil)
            blackHole(result)
        }
    }
}

func proofOfWorkBenchmarks() {
    let binding = PowBinding(attestID: "login-pow", deviceID: device.rawValue)
    let expires = now.addingTimeInterval(300)
    var generator = SystemRandomNumberGenerator()

    let classic = PowDifficulty(format: .altchaV1, maxNumber: 100_000, cost: 1, keyPrefix: "0")
    guard case .v1(let v1) = Altcha.create(classic, binding: binding, expiresAt: expires, key: serverKey, using: &generator) else {
        fatalError("not a classic challenge")
    }
    let number = (0...classic.maxNumber).first { Hex.encode(SHA256.hash(data: Array((v1.salt + String($0)).utf8))) == v1.challenge }!
    let v1Payload = base64JSON(
        #"{"algorithm":"SHA-256","challenge":"\#(v1.challenge)","number":\#(number),"salt":"\#(v1.salt)","signature":"\#(v1.signature)"}"#
    )

    // The standard v2 cost, with a one-digit prefix so that solving it here stays quick.
    let pbkdf2 = PowDifficulty(format: .altchaV2, maxNumber: 1_000, cost: PowDifficulty.standard.cost, keyPrefix: "0")
    guard case .v2(let v2) = Altcha.create(pbkdf2, binding: binding, expiresAt: expires, key: serverKey, using: &generator) else {
        fatalError("not a v2 challenge")
    }
    let (counter, derivedKey) = solve(v2.parameters)
    let p = v2.parameters
    let v2Payload = base64JSON(
        #"{"challenge":{"parameters":{"algorithm":"PBKDF2/SHA-256","cost":\#(p.cost),"data":{"attestId":"\#(binding.attestID)","#
            + #""deviceId":"\#(binding.deviceID)"},"expiresAt":\#(p.expiresAt),"keyLength":32,"keyPrefix":"\#(p.keyPrefix)","#
            + #""nonce":"\#(p.nonce)","salt":"\#(p.salt)"},"signature":"\#(v2.signature)"},"#
            + #""solution":{"counter":\#(counter),"derivedKey":"\#(derivedKey)"}}"#
    )

    Benchmark("PoW verify (ALTCHA classic)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try! Altcha.claim(payload: v1Payload, key: serverKey, binding: binding, at: now).checkWork())
        }
    }
    Benchmark("PoW verify (ALTCHA v2, 5000 PBKDF2 rounds)", configuration: .init(maxIterations: 2_000)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try! Altcha.claim(payload: v2Payload, key: serverKey, binding: binding, at: now).checkWork())
        }
    }
}

func solve(_ parameters: AltchaV2Challenge.Parameters) -> (Int, String) {
    let nonce = Hex.decode(parameters.nonce)!
    let salt = Hex.decode(parameters.salt)!
    for counter in 0..<UInt32.max {
        var password = nonce
        withUnsafeBytes(of: counter.bigEndian) { password.append(contentsOf: $0) }
        let key = try! KDF.Insecure.PBKDF2.deriveKey(
            from: password,
            salt: salt,
            using: .sha256,
            outputByteCount: 32,
            unsafeUncheckedRounds: parameters.cost
        )
        let derived = key.withUnsafeBytes { Hex.encode($0) }
        if derived.hasPrefix(parameters.keyPrefix) { return (Int(counter), derived) }
    }
    fatalError("no counter solves the challenge")
}

func base64JSON(_ json: String) -> String { Data(json.utf8).base64EncodedString() }

func storageSigningBenchmarks() {
    let secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
    let amzDate = "20261123T120000Z"
    let scope = SigV4.Scope(day: "20261123", region: "us-east-1", service: "s3")
    let headers = [("Host", "bucket.s3.amazonaws.com"), ("X-Amz-Date", amzDate), ("X-Amz-Content-Sha256", SigV4.unsignedPayload)]
    let query = [("X-Amz-Expires", "900"), ("X-Amz-SignedHeaders", "host"), ("x-id", "GetObject")]

    Benchmark("SigV4 sign (S3 request)") { benchmark in
        for _ in benchmark.scaledIterations {
            let canonical = SigV4.canonicalRequest(
                method: "GET",
                path: SigV4.s3Path(bucket: nil, key: "users/alice/photo.jpg"),
                query: query,
                headers: headers,
                payloadHash: SigV4.unsignedPayload
            )
            let stringToSign = SigV4.stringToSign(canonicalRequest: canonical.request, amzDate: amzDate, scope: scope)
            blackHole(SigV4.signature(stringToSign: stringToSign, secret: secret, scope: scope))
        }
    }

    let ossHeaders = [("x-oss-security-token", "CAIS-token"), ("Content-Type", "image/jpeg")]
    Benchmark("OSS V1 sign (HMAC-SHA1 header)") { benchmark in
        for _ in benchmark.scaledIterations {
            let resource = OSSV1Signature.canonicalizedResource(bucket: "bucket", key: "users/alice/photo.jpg", query: [("acl", "")])
            let text = OSSV1Signature.stringToSign(
                verb: "PUT",
                contentMD5: "",
                contentType: "image/jpeg",
                date: "Mon, 23 Nov 2026 12:00:00 GMT",
                headers: ossHeaders,
                resource: resource
            )
            blackHole(OSSV1Signature.signature(stringToSign: text, secret: secret))
        }
    }

    let time = UTCTime(now)
    let v4Headers = [("x-oss-content-sha256", "UNSIGNED-PAYLOAD"), ("x-oss-date", "20261123T120000Z"), ("content-type", "image/jpeg")]
    Benchmark("OSS V4 sign (HMAC-SHA256 chain)") { benchmark in
        for _ in benchmark.scaledIterations {
            let canonical = OSSV4Signature.canonicalRequest(
                method: "PUT",
                bucket: "bucket",
                key: "users/alice/photo.jpg",
                query: [],
                headers: v4Headers
            )
            blackHole(OSSV4Signature.signature(canonicalRequest: canonical, secret: secret, time: time, region: "cn-hangzhou"))
        }
    }
}
