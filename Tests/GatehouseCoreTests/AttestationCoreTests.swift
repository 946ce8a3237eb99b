import Crypto
import Foundation
import Testing

@testable import GatehouseCore

@Suite struct AttestationCoreTests {
    let key = SymmetricKey(data: Array("k".utf8))
    let binding = PowBinding(attestID: "login-pow", deviceID: DeviceID(bytes: Array(0..<16)).rawValue)
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func solvedV1(maxNumber: Int = 1_000) -> (challenge: AltchaV1Challenge, number: Int) {
        var generator = SystemRandomNumberGenerator()
        let difficulty = PowDifficulty(format: .altchaV1, maxNumber: maxNumber, cost: 1, keyPrefix: "0")
        guard
            case .v1(let challenge) = Altcha.create(difficulty, binding: binding, expiresAt: now.addingTimeInterval(60), key: key, using: &generator)
        else { fatalError("not classic") }
        let number = (0...maxNumber).first { Hex.encode(SHA256.hash(data: Array((challenge.salt + String($0)).utf8))) == challenge.challenge }!
        return (challenge, number)
    }

    func payload(_ challenge: AltchaV1Challenge, number: Int, salt: String? = nil) -> String {
        let json =
            #"{"algorithm":"SHA-256","challenge":"\#(challenge.challenge)","number":\#(number),"salt":"\#(salt ?? challenge.salt)","signature":"\#(challenge.signature)"}"#
        return Data(json.utf8).base64EncodedString()
    }

    @Test func aClassicSolutionVerifiesOnceBoundToItsDeviceAndBeforeItsExpiry() throws {
        let (challenge, number) = solvedV1()
        let solved = try Altcha.claim(payload: payload(challenge, number: number), key: key, binding: binding, at: now).checkWork()
        #expect(solved.replayKey.hasPrefix("v1:"))
        #expect(throws: DomainError.self) {
            try Altcha.claim(payload: payload(challenge, number: number), key: key, binding: binding, at: now.addingTimeInterval(61)).checkWork()
        }
        let other = PowBinding(attestID: "login-pow", deviceID: DeviceID(bytes: Array(repeating: 1, count: 16)).rawValue)
        #expect(throws: DomainError(.challengeMismatch, "This challenge was issued for another attester or device.", field: "payload")) {
            try Altcha.claim(payload: payload(challenge, number: number), key: key, binding: other, at: now).checkWork()
        }
        #expect(throws: DomainError.self) {
            try Altcha.claim(payload: payload(challenge, number: number + 1), key: key, binding: binding, at: now).checkWork()
        }
    }

    /// The cheap checks come first: a wrong number still makes a claim (whose replay key the caller
    /// spends), and only `checkWork` finds it wrong.
    @Test func aWrongSolutionIsFoundOnlyByTheWorkCheckAfterTheClaim() throws {
        let (challenge, number) = solvedV1()
        let claim = try Altcha.claim(payload: payload(challenge, number: number + 1), key: key, binding: binding, at: now)
        #expect(claim.replayKey.hasPrefix("v1:"))
        #expect(throws: DomainError(.wrongSolution, "The number does not solve this challenge.", field: "payload")) { try claim.checkWork() }
    }

    /// CVE-2025-68113: moving digits from the number into the salt keeps SHA-256(salt || number) and
    /// its signature; a lax salt reader would then read a different expiry.
    @Test func digitsSplicedBetweenSaltAndNumberAreRefused() throws {
        var (challenge, number) = solvedV1(maxNumber: 100_000)
        while number < 10 { (challenge, number) = solvedV1(maxNumber: 100_000) }
        let digits = String(number)
        let spliced = payload(challenge, number: Int(digits.dropFirst())!, salt: challenge.salt + String(digits.first!))
        #expect(throws: DomainError.self) { try Altcha.claim(payload: spliced, key: key, binding: binding, at: now).checkWork() }
        let withoutDelimiter = payload(challenge, number: number, salt: String(challenge.salt.dropLast()))
        #expect(throws: DomainError.self) { try Altcha.claim(payload: withoutDelimiter, key: key, binding: binding, at: now).checkWork() }
    }

    let appKey = try! AppKey(validating: "abcde")
    let loginAttester = Attester(
        appID: AppID(UUID()),
        attestID: try! AttestID(validating: "login-pow"),
        bindHeader: "Authorization",
        createdAt: Date(timeIntervalSince1970: 1_800_000_000),
        updatedAt: Date(timeIntervalSince1970: 1_800_000_000)
    )

    /// A token of `loginAttester` bound to `Bearer a`, signed with `signing`.
    func issueBound(signing: SigningKey) -> (token: String, claims: AttestationClaims) {
        var generator = SystemRandomNumberGenerator()
        return AttestationToken.issue(
            issuer: "gatehouse",
            appKey: appKey,
            device: DeviceID(bytes: Array(0..<16)),
            attester: loginAttester,
            address: nil,
            binding: AttestationToken.binding(of: "Bearer a"),
            at: now,
            signer: signing.signer,
            using: &generator
        )
    }

    /// Why `token` does not open `loginAttester`'s routes for a request bound to `bound`, or nil if it does.
    func refusal(
        _ token: some StringProtocol,
        keys: AttestationVerificationKeys,
        bound: String = "Bearer a",
        at: Date? = nil,
        verified: VerifiedTokens? = nil
    ) -> AttestationTokenFailure? {
        let result = AttestationToken.verify(
            String(token),
            appKey: appKey,
            attestID: loginAttester.attestID,
            boundValue: bound,
            requireBinding: true,
            keys: keys,
            at: at ?? now,
            verified: verified
        )
        if case .failure(let reason) = result { return reason }
        return nil
    }

    @Test func jwsRefusesAlgNoneAndUnknownKeysAndChecksBinding() throws {
        let signing = SigningKey.generate(at: now)
        let keys = keysFor(signing)
        let issued = issueBound(signing: signing)
        #expect(refusal(issued.token, keys: keys) == nil)
        #expect(refusal(issued.token, keys: keys, bound: "Bearer b") == .bindingMismatch)
        #expect(refusal(issued.token, keys: keys, at: now.addingTimeInterval(300)) == .expired)
        #expect(refusal(issued.token, keys: AttestationVerificationKeys(published: [:])) == .unknownKey)
        let parts = issued.token.split(separator: ".")
        let none = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + parts[1] + "."
        #expect(refusal(none, keys: keys) == .unsupportedAlgorithm)
        #expect(refusal(parts[0] + "." + parts[1] + "." + Base64URL.encode(Array(repeating: 0, count: 64)), keys: keys) == .badSignature)
    }

    func keysFor(_ key: SigningKey) -> AttestationVerificationKeys {
        AttestationVerificationKeys(published: [key.kid: PublishedKey(key.privateKey.publicKey)])
    }

    /// The gate remembers ES256 tokens it verified; a remembered token still meets every check that
    /// depends on the request, and only under the key it verified with.
    @Test func verifiedTokensAreRememberedUnderTheirKeyOnly() throws {
        let signing = SigningKey.generate(at: now)
        let keys = keysFor(signing)
        let issued = issueBound(signing: signing)
        let cache = VerifiedTokens()
        #expect(cache.remembered(issued.token) == nil)
        #expect(refusal(issued.token, keys: keys, verified: cache) == nil)
        #expect(cache.remembered(issued.token)?.claims == issued.claims)
        #expect(cache.remembered(issued.token)?.kid == signing.kid)
        #expect(refusal(issued.token, keys: keys, verified: cache) == nil)
        // Remembered, and still checked against the request and the clock.
        #expect(refusal(issued.token, keys: keys, bound: "Bearer b", verified: cache) == .bindingMismatch)
        #expect(refusal(issued.token, keys: keys, at: now.addingTimeInterval(3600), verified: cache) == .expired)
        // A key no longer trusted is not looked up; another key under the same kid does not reuse the entry.
        #expect(refusal(issued.token, keys: AttestationVerificationKeys(published: [:]), verified: cache) == .unknownKey)
        let other = AttestationVerificationKeys(published: [signing.kid: PublishedKey(SigningKey.generate(at: now).privateKey.publicKey)])
        #expect(refusal(issued.token, keys: other, verified: cache) == .badSignature)
        // A bad signature is never remembered.
        let parts = issued.token.split(separator: ".")
        let forged = parts[0] + "." + parts[1] + "." + Base64URL.encode(Array(repeating: 1, count: 64))
        #expect(refusal(forged, keys: keys, verified: cache) == .badSignature)
        #expect(refusal(forged, keys: keys, verified: cache) == .badSignature)
        #expect(cache.remembered(String(forged)) == nil)
    }

    /// A remembered token is not parsed again: the verifier asks only whether its key is still
    /// trusted, and a key that is not (or another key under its kid) sends it through the whole check.
    @Test func aRememberedTokenAsksOnlyForItsKey() async throws {
        let signing = SigningKey.generate(at: now)
        let issued = issueBound(signing: signing)
        let cache = VerifiedTokens()
        var asked: [AttestationKeyRequest] = []
        func verify(trusting keys: AttestationVerificationKeys) async -> Result<AttestationClaims, AttestationTokenFailure> {
            await AttestationToken.verify(
                issued.token,
                appKey: appKey,
                attestID: loginAttester.attestID,
                boundValue: "Bearer a",
                requireBinding: true,
                at: now,
                verified: cache
            ) { request in
                asked.append(request)
                return keys
            }
        }
        let request = AttestationKeyRequest(algorithm: .es256, keyID: signing.kid)
        #expect(try await verify(trusting: keysFor(signing)).get() == issued.claims)
        #expect(try await verify(trusting: keysFor(signing)).get() == issued.claims)
        #expect(asked == [request, request])
        let other = AttestationVerificationKeys(published: [signing.kid: PublishedKey(SigningKey.generate(at: now).privateKey.publicKey)])
        asked = []
        #expect(await verify(trusting: other) == .failure(.badSignature))
        #expect(await verify(trusting: AttestationVerificationKeys(published: [:])) == .failure(.unknownKey))
        // Each asked twice: once for the remembered key, once for the parsed token's.
        #expect(asked == [request, request, request, request])
    }

    @Test func verifiedTokensStayWithinTheirCapacity() {
        let cache = VerifiedTokens(capacity: 4)
        func claims(expiring exp: Int) -> AttestationClaims {
            AttestationClaims(iss: "g", aud: "abcde", sub: "d", did: "d", iat: 0, exp: exp, jti: UUID().uuidString, attestId: "a")
        }
        let tokens = (0..<6).map { "token \($0)" }
        let key = PublishedKey(SigningKey.generate(at: now).privateKey.publicKey)
        func remember(_ token: String, expiring exp: Int) {
            cache.remember(claims(expiring: exp), token: token, kid: "k", key: key, at: now)
        }
        let expiry = Int(now.timeIntervalSince1970)
        for (offset, token) in tokens.prefix(4).enumerated() {
            remember(token, expiring: offset < 2 ? expiry - 1 : expiry + 60)
        }
        // Full: the two expired entries go, the live ones stay.
        remember(tokens[4], expiring: expiry + 60)
        #expect(cache.remembered(tokens[0]) == nil && cache.remembered(tokens[1]) == nil)
        #expect(cache.remembered(tokens[2]) != nil && cache.remembered(tokens[4]) != nil)
        // Full of live entries: it starts over.
        remember(tokens[0], expiring: expiry + 60)
        remember(tokens[5], expiring: expiry + 60)
        #expect(cache.remembered(tokens[2]) == nil && cache.remembered(tokens[5]) != nil)
    }

    /// A plain path is read in one pass; it must come out as the step-by-step reading has it, for
    /// every path the one pass takes, and the one pass must leave every other path to it.
    @Test func aPlainPathReadsAsTheDecodedReadingHasIt() {
        for plain in ["/", "/api/", "/api/orders", "/api/orders?x=1&y=%2F", "/a.b/c..d/.e/f./~_-", "/API/v1.json"] {
            #expect(Gate.plainPath(plain) != nil && Gate.plainPath(plain) == Gate.decodedPath(plain), "\(plain)")
        }
        for other in [
            "", "api", "?/", "//", "/a//b", "/a/./b", "/a/../b", "/a/..", "/a/.", "/.", "/..", "/a%20b", "/a;b", "/a\\b", "/é", "/a b", "/a@b",
        ] {
            #expect(Gate.plainPath(other) == nil, "\(other)")
        }
        #expect(Gate.plainPath("/" + String(repeating: "a", count: 8191)) != nil)
        #expect(Gate.plainPath("/" + String(repeating: "a", count: 8192)) == nil)
        #expect(Gate.decodedPath("/" + String(repeating: "a", count: 8192)) == nil)
        var generator = SystemRandomNumberGenerator()
        let alphabet: [String] = ["/", "/", ".", ".", "a", "Z", "0", "-", "_", "~", "?", "%", "2", "f", ";", "\\", "é", "Ａ", " ", "%2e"]
        var taken = 0
        for _ in 0..<20_000 {
            let path = (0..<Int.random(in: 0...10, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }.joined()
            guard let plain = Gate.plainPath(path) else { continue }
            taken += 1
            #expect(plain == Gate.decodedPath(path), "\(path)")
        }
        #expect(taken > 100)
    }

    @Test func theGateMatchesNormalisedPathsByLongestPrefix() throws {
        #expect(Gate.normalizedPath("/api/../api/%70ay?x=1") == "/api/pay")
        #expect(Gate.normalizedPath("//api//pay/") == "/api/pay/")
        #expect(Gate.normalizedPath("/../etc") == nil)
        let now = Date()
        let app = AppID(UUID())
        let wide = Attester(
            appID: app,
            attestID: try AttestID(validating: "wide"),
            routes: [try ProtectedRoute(method: "*", pathPrefix: "/api/")],
            createdAt: now,
            updatedAt: now
        )
        let narrow = Attester(
            appID: app,
            attestID: try AttestID(validating: "narrow"),
            routes: [try ProtectedRoute(method: "post", pathPrefix: "/api/pay")],
            createdAt: now,
            updatedAt: now
        )
        #expect(Gate.attester(for: "POST", path: "/api/pay/now", among: [wide, narrow])?.attestID.rawValue == "narrow")
        #expect(Gate.attester(for: "GET", path: "/api/pay/now", among: [wide, narrow])?.attestID.rawValue == "wide")
        #expect(Gate.attester(for: "GET", path: "/public", among: [wide, narrow]) == nil)
    }

    /// Spellings whose meaning depends on the upstream are gated as the strictest reads them: a prefix
    /// ending in `/` gates the path without it and with a format suffix, and a character that folds to
    /// ASCII under NFKC makes the path unreadable (the gate then challenges it as malformed).
    @Test(arguments: [
        ("/api", true), ("/API", true), ("/api.json", true), ("/api/orders", true), ("/Api.XML", true), ("/apiary", false),
        ("/ap", false), ("/", false), ("/v1/api", false),
    ])
    func aPrefixWithItsSlashGatesThePathWithoutIt(path: String, gated: Bool) throws {
        let route = try ProtectedRoute(method: "*", pathPrefix: "/api/")
        #expect(route.matches(method: "GET", path: path) == gated)
        #expect(try ProtectedRoute(method: "*", pathPrefix: "/").matches(method: "GET", path: path))
        #expect(!(try ProtectedRoute(method: "*", pathPrefix: "/api").matches(method: "GET", path: "/ap")))
    }

    @Test(
        arguments: [
            ("/%EF%BC%A1PI/orders", nil), ("/\u{FF21}pi/orders", nil), ("/api/\u{FB01}le", nil), ("/api/x\u{00B2}", nil),
            ("/caf%C3%A9/menu", "/café/menu"), ("/api/%E4%B8%AD%E6%96%87", "/api/中文"), ("/api/orders", "/api/orders"),
            // A long path of characters case folding changes is read once per distinct character.
            ("/" + String(repeating: "\u{00C9}", count: 2000), "/" + String(repeating: "\u{00C9}", count: 2000)),
            ("/" + String(repeating: "\u{00C9}", count: 2000) + "\u{FF21}", nil),
        ] as [(String, String?)]
    )
    func charactersThatFoldToASCIIAreUnreadable(uri: String, normalized: String?) {
        #expect(Gate.normalizedPath(uri) == normalized)
    }

    @Test func riskierDevicesGetHarderWork() throws {
        let now = Date()
        let attester = Attester(appID: AppID(UUID()), attestID: try AttestID(validating: "adaptive"), createdAt: now, updatedAt: now)
        let quiet = AdaptiveDifficulty.difficulty(for: attester, activity: .quiet)
        let reviewed = AdaptiveDifficulty.difficulty(
            for: attester,
            activity: .init(reviewsLastHour: 1, rejectsLastHour: 0, ztokensLastTenMinutes: 0, denyListed: false)
        )
        let rejected = AdaptiveDifficulty.difficulty(
            for: attester,
            activity: .init(reviewsLastHour: 0, rejectsLastHour: 1, ztokensLastTenMinutes: 0, denyListed: false)
        )
        let denied = AdaptiveDifficulty.difficulty(
            for: attester,
            activity: .init(reviewsLastHour: 0, rejectsLastHour: 0, ztokensLastTenMinutes: 0, denyListed: true)
        )
        let levels: [Int] = [quiet.level, reviewed.level, rejected.level, denied.level]
        #expect(levels == [0, 1, 2, 3])
        #expect(denied.difficulty.maxNumber == quiet.difficulty.maxNumber * 64)
        var fixed = attester
        fixed.adaptive = false
        #expect(
            AdaptiveDifficulty.difficulty(
                for: fixed,
                activity: .init(reviewsLastHour: 9, rejectsLastHour: 9, ztokensLastTenMinutes: 99, denyListed: true)
            ).level == 0
        )
    }

    @Test func failedSignaturesRaiseTheLevel() {
        let levels = [0, 2, 3, 9, 10].map { failures in
            AdaptiveDifficulty.level(
                RecentDeviceActivity(
                    reviewsLastHour: 0,
                    rejectsLastHour: 0,
                    ztokensLastTenMinutes: 0,
                    denyListed: false,
                    signatureFailuresLastHour: failures
                )
            )
        }
        #expect(levels == [0, 0, 1, 1, 2])
    }

    @Test func theCaptchaJoinsByKindOrAtTheTopRiskLevel() throws {
        var attester = Attester(appID: AppID(UUID()), attestID: try AttestID(validating: "login"), createdAt: now, updatedAt: now)
        attester.adaptive = true
        #expect(!AdaptiveDifficulty.requiresCaptcha(attester, level: 2))
        #expect(AdaptiveDifficulty.requiresCaptcha(attester, level: 3))
        attester.adaptive = false
        #expect(!AdaptiveDifficulty.requiresCaptcha(attester, level: 3))
        var change = AttesterChange()
        change.kind = "pow+captcha"
        let both = try change.applied(to: attester, at: now)
        #expect(both.kind == .powAndCaptcha && both.kind.asksForWork && AdaptiveDifficulty.requiresCaptcha(both, level: 0))
        change.kind = "captcha"
        let captchaOnly = try change.applied(to: attester, at: now)
        #expect(!captchaOnly.kind.asksForWork && captchaOnly.kind.asksForCaptcha)
        change.kind = "captcha+pow"
        #expect(throws: DomainError.self) { try change.applied(to: attester, at: now) }
    }
}
