import Foundation
import GatehouseCore
import GatehouseSigning
import GatehouseStore

/// What the mobile SDK calls: signed-request checks, device start, ztoken issuance (native and H5).
public struct SDKOperations: Sendable {
    let store: any DeviceRiskStore
    let apps: any AppStore
    let box: SecretBox
    let keys: ServerKeys
    let clock: any GatehouseClock

    public init(store: any DeviceRiskStore, apps: any AppStore, box: SecretBox, clock: any GatehouseClock) {
        self.store = store
        self.apps = apps
        self.box = box
        self.keys = ServerKeys(box: box)
        self.clock = clock
    }

    /// The signed request's headers and what they sign.
    public struct SignedRequest: Sendable {
        public var appKey: String?
        public var timestamp: String?
        public var nonce: String?
        public var signature: String?
        public var method: String
        public var path: String
        public var body: [UInt8]

        public init(appKey: String?, timestamp: String?, nonce: String?, signature: String?, method: String, path: String, body: [UInt8]) {
            self.appKey = appKey
            self.timestamp = timestamp
            self.nonce = nonce
            self.signature = signature
            self.method = method
            self.path = path
            self.body = body
        }
    }

    /// Checks the signature, clock window and nonce; returns the calling app.
    public func authenticate(_ request: SignedRequest) async throws -> App {
        let signed = try SDKSignedRequest.parse(
            appKey: request.appKey,
            timestamp: request.timestamp,
            nonce: request.nonce,
            signature: request.signature
        ).get()
        guard let (app, secrets) = try await apps.appWithSecrets(withKey: signed.appKey) else { throw SDKRefusal.appKeyUnknown }
        let now = clock.now()
        try signed.verify(
            method: request.method,
            path: request.path,
            body: request.body,
            app: app,
            secrets: secrets,
            at: now,
            box: box
        ).get()
        guard try await store.useNonce(appID: app.id, nonce: signed.nonce, expiresAt: signed.nonceKeptUntil)
        else { throw SDKRefusal.nonceReused }
        return app
    }

    public struct StartedDevice: Sendable {
        public let device: Device
        public let dropped: [DeviceDataGroup]
        public let deviceKey: String
        public let ztokenTTLSeconds: Int
        /// What the device mints its ztokens with (`ZTokenFormat`): the key and the context bytes.
        public let ztokenKey: String
        public let ztokenContext: String
        /// The app's registered events: the device mints ztokens for these only.
        public let events: [Int]
    }

    public func startDevice(app: App, report: DeviceReport, address: String?) async throws -> StartedDevice {
        let start = try DeviceStart.decide(report: report, app: app, address: address, at: clock.now(), keys: keys)
        let stored = try await store.upsertDevice(start.device)
        let ztokenKey = ZToken.deviceKey(app: app.id, device: stored.id, epoch: UInt32(clamping: stored.keyEpoch), keys: keys)
        return StartedDevice(
            device: stored,
            dropped: start.dropped,
            deviceKey: Base64URL.encode(DeviceStart.deviceKey(for: stored, keys: keys)),
            ztokenTTLSeconds: app.settings.ztokenTTLSeconds,
            ztokenKey: Base64URL.encode(ztokenKey.key.withUnsafeBytes { Array($0) }),
            ztokenContext: Base64URL.encode(ztokenKey.context),
            events: try await store.registeredEvents(appID: app.id).sorted()
        )
    }

    /// A ztoken minted here for a started device, a registered event and an account, as the device
    /// mints its own: nothing is stored but the page of a bridge token.
    public func issueZToken(
        app: App,
        deviceID: String,
        eventID: Int,
        accountID: String,
        pageURL: String? = nil
    ) async throws -> (token: String, expiresAt: Date) {
        try app.requireActive()
        let device = try DeviceID(validating: deviceID)
        let event = try EventID(validating: eventID)
        let account = try AccountID(validating: accountID)
        let preconditions = try await store.issuancePreconditions(appID: app.id, eventID: event, deviceID: device)
        guard preconditions.eventRegistered else {
            throw DomainError(.eventNotRegistered, "Event \(event) is not registered for this app.", field: "eventId")
        }
        guard let epoch = preconditions.keyEpoch else {
            throw DomainError(.invalidDeviceID, "This device has not been started; call device start first.", field: "deviceId")
        }
        var generator = SystemRandomNumberGenerator()
        let now = clock.now()
        let token = ZToken.issue(
            app: app.id,
            device: device,
            epoch: UInt32(clamping: epoch),
            event: event,
            account: account,
            ttlSeconds: app.settings.ztokenTTLSeconds,
            fromPage: pageURL != nil,
            at: now,
            keys: keys,
            using: &generator
        )
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let expiresAt = issuedAt.addingTimeInterval(TimeInterval(app.settings.ztokenTTLSeconds))
        if let pageURL, let tokenID = ZTokenFormat.open(token).map({ Base64URL.encode($0.tokenID) }) {
            try await store.recordZTokenPage(appID: app.id, tokenID: tokenID, pageURL: pageURL, expiresAt: expiresAt)
        }
        return (token, expiresAt)
    }

    /// The H5 bridge: `js` is the page's JSON, naming the event as `eventId` (a number or a string of
    /// digits); `a` is the account (UID), `c` the CUID, `url` the page.
    public func issueBridgeZToken(
        app: App,
        deviceID: String,
        js: String,
        url: String,
        cuid: String,
        uid: String
    )
        async throws -> (token: String, expiresAt: Date)
    {
        let eventID = try BridgeRequest.eventID(fromPageJSON: js)
        try BridgeRequest.validate(url: url, cuid: cuid)
        return try await issueZToken(app: app, deviceID: deviceID, eventID: eventID, accountID: uid, pageURL: url)
    }
}

/// The H5 bridge's parameters, checked.
enum BridgeRequest {
    /// The part of the page's JSON the server reads; other keys are the page's business.
    private struct PageJSON: Decodable {
        let eventId: Int

        enum CodingKeys: String, CodingKey { case eventId }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let number = try? container.decode(Int.self, forKey: .eventId) {
                eventId = number
            } else if let number = Int(try container.decode(String.self, forKey: .eventId)) {
                eventId = number
            } else {
                throw DecodingError.dataCorruptedError(forKey: .eventId, in: container, debugDescription: "not an event id")
            }
        }
    }

    static func eventID(fromPageJSON js: String) throws(DomainError) -> Int {
        guard js.unicodeScalars.count <= 4096, let page = try? JSONDecoder().decode(PageJSON.self, from: Data(js.utf8)) else {
            throw DomainError(
                .invalidBridgeParameters,
                "js is the page's JSON object (at most 4096 characters) naming the event as \"eventId\": 3300 to 3400.",
                field: "js"
            )
        }
        return page.eventId
    }

    static func validate(url: String, cuid: String) throws(DomainError) {
        guard url.unicodeScalars.count <= 2048, let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""),
            parsed.host != nil
        else { throw DomainError(.invalidBridgeParameters, "url is the page's http(s) URL, at most 2048 characters.", field: "url") }
        guard (1...128).contains(cuid.unicodeScalars.count), !cuid.hasControlCharacters else {
            throw DomainError(.invalidBridgeParameters, "c (the CUID) is 1 to 128 characters.", field: "c")
        }
    }
}
