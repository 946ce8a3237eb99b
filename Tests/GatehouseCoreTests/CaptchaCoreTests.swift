import Foundation
import GatehouseTestSupport
import Testing

@testable import GatehouseCore

@Suite struct CaptchaCoreTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func answer(_ position: Double, _ trajectory: [DragPoint], duration: Double? = nil) throws -> DragAnswer {
        try DragAnswer(position: position, durationMs: duration ?? (trajectory.last!.t + 30), trajectory: trajectory)
    }

    /// "code field" of the DomainError `body` throws, or nil if it throws none.
    func refused(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as DomainError {
            return "\(error.code.rawValue) \(error.field ?? "")"
        } catch {
            return "\(error)"
        }
    }

    // MARK: Images

    @Test func checksumsMatchTheirPublishedValues() {
        #expect(PNG.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(Deflate.adler32(Array("Wikipedia".utf8)) == 0x11E6_0398)
    }

    @Test func puzzlesAreValidPNGsWithTheGapInRange() {
        var generator = SeededGenerator(state: 1)
        let puzzle = SliderPuzzle.generate(using: &generator)
        for image in [puzzle.background, puzzle.piece] {
            #expect(Array(image.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            #expect(Array(image.suffix(12)) == [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82])
        }
        #expect(SliderPuzzle.gapX.contains(puzzle.answer.x) && SliderPuzzle.gapY.contains(puzzle.answer.y))
        // Smooth scenery compresses: far below the 150 KiB of raw RGB.
        #expect(puzzle.background.count < 60_000)
    }

    @Test func sceneryStaysInsideTheImageWhateverTheDice() {
        // Hills, discs and streaks are placed at random, partly off the edges; none may index outside.
        for seed in 0..<150 {
            var generator = SeededGenerator(state: UInt64(seed))
            let image = Scenery.paint(width: SliderPuzzle.width, height: SliderPuzzle.height, using: &generator)
            #expect(image.pixels.count == SliderPuzzle.width * SliderPuzzle.height)
        }
    }

    @Test func everyPuzzleDiffers() {
        var first = SeededGenerator(state: 1)
        var second = SeededGenerator(state: 2)
        var again = SeededGenerator(state: 1)
        let a = SliderPuzzle.generate(using: &first)
        let b = SliderPuzzle.generate(using: &second)
        #expect(a.background != b.background && a.answer != b.answer)
        #expect(SliderPuzzle.generate(using: &again).background == a.background)
    }

    @Test func theZlibStreamIsWellFormed() {
        let data = Array(repeating: Array("gatehouse ".utf8), count: 200).flatMap { $0 } + (0..<255).map(UInt8.init)
        let stream = Deflate.zlib(data)
        #expect(stream[0] == 0x78 && (Int(stream[0]) * 256 + Int(stream[1])) % 31 == 0)
        // Long repeats collapse into back-references.
        #expect(stream.count < data.count / 4)
        let adler = stream.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        #expect(adler == Deflate.adler32(data))
    }

    // MARK: Answers

    @Test func malformedAnswersAreParameterErrors() throws {
        let good = DragSamples.human(to: 150)
        let cases: [(Double, Double, [DragPoint], String)] = [
            (150, 900, [], "trajectory"),
            (150, 900, [DragPoint(x: 0, y: 0, t: 0)], "trajectory"),
            (150, 900, Array(repeating: DragPoint(x: 1, y: 0, t: 1), count: 10_000), "trajectory"),
            (150, 900, [DragPoint(x: 0, y: 0, t: 50), DragPoint(x: 10, y: 0, t: 20)], "trajectory"),
            (150, 900, [DragPoint(x: .nan, y: 0, t: 0), DragPoint(x: 1, y: 0, t: 1)], "trajectory"),
            (150, 900, [DragPoint(x: 0, y: .infinity, t: 0), DragPoint(x: 1, y: 0, t: 1)], "trajectory"),
            (150, 900, [DragPoint(x: 0, y: 0, t: -1), DragPoint(x: 1, y: 0, t: 1)], "trajectory"),
            (.nan, 900, good, "position"),
            (-1, 900, good, "position"),
            (400, 900, good, "position"),
            (150, .infinity, good, "durationMs"),
            (150, 120_000, good, "durationMs"),
        ]
        for (position, duration, trajectory, field) in cases {
            #expect(
                refused { _ = try DragAnswer(position: position, durationMs: duration, trajectory: trajectory) } == "invalid_captcha_answer \(field)"
            )
        }
    }

    @Test func aHumanDragPasses() throws {
        #expect(HumanDrag.judge(try Self.answer(150, DragSamples.human(to: 150))) == nil)
        #expect(HumanDrag.judge(try Self.answer(220, DragSamples.human(to: 220, points: 80, milliseconds: 2500))) == nil)
    }

    @Test func roboticDragsAreRecognised() throws {
        let straight = (0...20).map { DragPoint(x: Double($0) * 7.5, y: 0, t: Double($0) * 40) }
        #expect(HumanDrag.judge(try Self.answer(150, straight)) == .constantSpeed)
        // Ease-out speed profile but on an exact horizontal line.
        let ruled = DragSamples.human(to: 150).map { DragPoint(x: $0.x, y: 3, t: $0.t) }
        #expect(HumanDrag.judge(try Self.answer(150, ruled)) == .ruledLine)
        let instant = [DragPoint(x: 0, y: 0, t: 0), DragPoint(x: 150, y: 2, t: 5)]
        #expect(HumanDrag.judge(try Self.answer(150, instant)) == .tooFast)
        let fewPoints = [0, 100, 200, 300, 400].map { DragPoint(x: $0 / 400 * 150, y: $0 / 100, t: $0) }
        #expect(HumanDrag.judge(try Self.answer(150, fewPoints)) == .tooFewPoints)
        let dawdling = DragSamples.human(to: 150, milliseconds: 25_000)
        #expect(HumanDrag.judge(try Self.answer(150, dawdling)) == .tooSlow)
        var jump = DragSamples.human(to: 150)
        jump[5] = DragPoint(x: 140, y: jump[5].y, t: jump[5].t)
        jump[6] = DragPoint(x: jump[6].x, y: jump[6].y, t: jump[5].t + 1)
        #expect(HumanDrag.judge(try Self.answer(150, jump)) == .teleport)
        #expect(HumanDrag.judge(try Self.answer(180, DragSamples.human(to: 150))) == .endMismatch)
        #expect(HumanDrag.judge(try Self.answer(150, DragSamples.human(to: 150), duration: 200)) == .durationMismatch)
        #expect(HumanDrag.judge(try Self.answer(150, DragSamples.human(to: 150), duration: 5_000)) == .durationMismatch)
    }

    /// The drags a short script sends once the simple checks are known: a textbook easing curve, a
    /// noisy one that stops dead on target, and one sampled on a timer.
    @Test func syntheticDragsAreRecognised() throws {
        #expect(HumanDrag.judge(try Self.answer(150, DragSamples.easedScript(to: 150))) == .smoothCurve)
        var generator = SeededGenerator(state: 3)
        let noisy = DragSamples.easedScript(to: 150).enumerated().map { index, point in
            index == 0 || index == 30 ? point : DragPoint(x: point.x + Double.random(in: -2...2, using: &generator), y: point.y, t: point.t)
        }
        let monotone = noisy.indices.map { index in
            DragPoint(x: min(150, noisy[...index].map(\.x).max()!), y: noisy[index].y, t: noisy[index].t)
        }
        #expect(HumanDrag.judge(try Self.answer(150, monotone)) == .noCorrection)
        let clockwork = DragSamples.human(to: 150).enumerated().map { DragPoint(x: $1.x, y: $1.y, t: Double($0) * 30) }
        #expect(HumanDrag.judge(try Self.answer(150, clockwork)) == .regularTiming)
    }

    // MARK: Challenges and passes

    func challenge(answerX: Int = 150, state: CaptchaState = .open, attempts: Int = 3) throws -> CaptchaChallenge {
        var generator = SeededGenerator(state: 3)
        var challenge = CaptchaChallenge.open(
            id: CaptchaID.generate(using: &generator),
            appID: AppID(UUID()),
            request: try CaptchaRequest(language: nil, deviceID: nil, attestID: nil, action: "login", cdata: nil),
            answer: PuzzleAnswer(x: answerX, y: 40),
            hostname: "example.com",
            clientAddress: "192.0.2.1",
            at: now
        )
        challenge.state = state
        challenge.attemptsLeft = attempts
        return challenge
    }

    @Test func aChallengeJudgesPositionWithinTolerance() throws {
        let open = try challenge()
        #expect(try open.judge(try Self.answer(154, DragSamples.human(to: 154)), at: now) == .passed)
        #expect(try open.judge(try Self.answer(146, DragSamples.human(to: 146)), at: now) == .passed)
        #expect(try open.judge(try Self.answer(160, DragSamples.human(to: 160)), at: now) == .missed(reason: "wrong_position"))
        let straight = (0...20).map { DragPoint(x: Double($0) * 7.5, y: 0, t: Double($0) * 40) }
        #expect(try open.judge(try Self.answer(150, straight), at: now) == .missed(reason: "constant_speed"))
    }

    @Test func closedOrExpiredChallengesRefuseAnswers() throws {
        let drag = try Self.answer(150, DragSamples.human(to: 150))
        #expect(
            refused { _ = try challenge().judge(drag, at: now.addingTimeInterval(CaptchaChallenge.lifetimeSeconds)) } == "captcha_expired challengeId"
        )
        #expect(refused { _ = try challenge(state: .passed).judge(drag, at: now) } == "captcha_solved challengeId")
        #expect(refused { _ = try challenge(state: .dead, attempts: 0).judge(drag, at: now) } == "captcha_exhausted challengeId")
    }

    @Test func requestsFollowTurnstileLimits() throws {
        #expect(
            try CaptchaRequest(language: "cn", deviceID: nil, attestID: nil, action: "sign_up-2", cdata: String(repeating: "a", count: 255)).language
                == .cn
        )
        for (language, action, cdata, field) in [
            ("de", nil, nil, "language"), ("en", "", nil, "action"), ("en", String(repeating: "a", count: 33), nil, "action"),
            ("en", "a b", nil, "action"), ("en", nil, String(repeating: "a", count: 256), "cdata"), ("en", nil, "<x>", "cdata"),
        ] as [(String, String?, String?, String)] {
            #expect(
                refused { _ = try CaptchaRequest(language: language, deviceID: nil, attestID: nil, action: action, cdata: cdata) }
                    == "invalid_captcha_request \(field)"
            )
        }
        #expect(
            refused { _ = try CaptchaRequest(language: nil, deviceID: "nope", attestID: nil, action: nil, cdata: nil) }
                == "invalid_device_id deviceId"
        )
    }

    @Test func passTokensAreOpaqueAndStoredHashed() throws {
        var generator = SystemRandomNumberGenerator()
        let (token, pass) = CaptchaPass.issue(for: try challenge(), at: now, using: &generator)
        #expect(token.hasPrefix("gcp_") && token.count == 47)
        #expect(CaptchaPass.storedHash(of: token) == pass.tokenHash && pass.tokenHash.count == 64 && !pass.tokenHash.contains(token))
        #expect(pass.expiresAt == now.addingTimeInterval(300))
        for malformed in ["", "gcp_", "gcp_" + String(repeating: "!", count: 43), "xyz_" + String(repeating: "A", count: 43), token + "A"] {
            #expect(CaptchaPass.storedHash(of: malformed) == nil)
        }
    }

    @Test func redemptionOutcomes() throws {
        var generator = SystemRandomNumberGenerator()
        var pass = CaptchaPass.issue(for: try challenge(), at: now, using: &generator).pass
        let key = PassRedemption.siteverify(idempotencyKey: "k1")
        #expect(PassRedemptionOutcome.classify(nil, redeemedNow: false, as: key) == .unknown)
        pass.redemption = key
        #expect(PassRedemptionOutcome.classify(pass, redeemedNow: true, as: key) == .valid(pass))
        #expect(PassRedemptionOutcome.classify(pass, redeemedNow: false, as: key) == .valid(pass))
        #expect(PassRedemptionOutcome.classify(pass, redeemedNow: false, as: .siteverify(idempotencyKey: "k2")) == .spent)
        #expect(PassRedemptionOutcome.classify(pass, redeemedNow: false, as: .siteverify(idempotencyKey: nil)) == .spent)
        pass.redemption = .siteverify(idempotencyKey: nil)
        #expect(PassRedemptionOutcome.classify(pass, redeemedNow: false, as: .siteverify(idempotencyKey: nil)) == .spent)
        for redemption in [PassRedemption.siteverify(idempotencyKey: nil), key, .attester(try AttestID(validating: "login")), .secondaryVerification]
        {
            #expect(PassRedemption(storedValue: redemption.storedValue) == redemption)
        }
    }

    @Test func siteverifyInputsMapToTurnstileCodes() {
        let token = "gcp_" + String(repeating: "A", count: 43)
        func code(_ secret: String?, _ response: String?, ip: String? = nil, key: String? = nil) -> Siteverify.ErrorCode? {
            if case .failure(let code) = Siteverify.check(.init(secret: secret, response: response, remoteIP: ip, idempotencyKey: key)) {
                return code
            }
            return nil
        }
        #expect(code(nil, token) == .missingInputSecret)
        #expect(code("", token) == .missingInputSecret)
        #expect(code("nocolon", token) == .invalidInputSecret)
        #expect(code("bad key!:gsk_x", token) == .invalidInputSecret)
        #expect(code("abcde:gsk_x", nil) == .missingInputResponse)
        #expect(code("abcde:gsk_x", "short") == .invalidInputResponse)
        #expect(code("abcde:gsk_x", token, ip: "999.1.1.1") == .badRequest)
        #expect(code("abcde:gsk_x", token, key: "not-a-uuid") == .badRequest)
        #expect(code("abcde:gsk_x", token, ip: "2001:db8::1", key: "3F2504E0-4F89-11D3-9A0C-0305E82C3301") == nil)
        if case .success(let checked) = Siteverify.check(.init(secret: "abcde:gsk_x:y", response: token, remoteIP: nil, idempotencyKey: nil)) {
            #expect(checked.serverSecret == "gsk_x:y")
        } else {
            Issue.record("a secret with a colon in the server part should split at the first colon")
        }
    }

    @Test func seedCodesForRefusals() {
        #expect(CaptchaCode(DomainError(.captchaExpired, "")) == .verificationFailed)
        #expect(CaptchaCode(DomainError(.captchaNotFound, "")) == .verificationFailed)
        #expect(CaptchaCode(DomainError(.invalidCaptchaAnswer, "")) == .parameterError)
        #expect(CaptchaCode.cancelled.rawValue == 1005)
    }

    // MARK: Rate limits

    @Test func rateLimitsCountPerKeyAndWindow() {
        var limiter = RateLimiter()
        let rule = RateLimiter.Rule(limit: 3, windowSeconds: 60)
        for _ in 0..<3 { #expect(limiter.admit("ip:a", rule: rule, at: now) == .allowed) }
        #expect(limiter.admit("ip:a", rule: rule, at: now.addingTimeInterval(10)) == .limited(retryAfter: 50))
        #expect(limiter.admit("ip:b", rule: rule, at: now.addingTimeInterval(10)) == .allowed)
        #expect(limiter.admit("ip:a", rule: rule, at: now.addingTimeInterval(60)) == .allowed)
    }

    @Test func rateLimitMemoryStaysBounded() {
        var limiter = RateLimiter(maximumKeys: 100)
        let rule = RateLimiter.Rule(limit: 1, windowSeconds: 60)
        for i in 0..<1_000 { _ = limiter.admit("ip:\(i)", rule: rule, at: now) }
        #expect(limiter.trackedKeys <= 100)
    }
}
