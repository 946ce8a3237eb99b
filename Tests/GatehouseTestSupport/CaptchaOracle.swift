import GatehouseCore
import GatehouseStore

/// The gap of a captcha challenge, read from the store: the tests' oracle, since no response carries
/// it. Works while a server (in this process or another) holds the same database.
public func captchaAnswer(_ location: StoreLocation, appKey: String, challengeID: String) async throws -> PuzzleAnswer {
    try await StoreService.withStore(location, logger: TestDatabase.logger) { store in
        guard let app = try await store.apps.app(withKey: try AppKey(validating: appKey)),
            let challenge = try await store.captcha.captchaChallenge(appID: app.id, id: try CaptchaID(validating: challengeID))
        else { throw TestSetupError("no captcha challenge \(challengeID) for \(appKey)") }
        return challenge.answer
    }
}
