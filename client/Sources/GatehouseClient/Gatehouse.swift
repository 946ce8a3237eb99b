import Crypto
import Foundation
import GatehouseAPI
import GatehouseSigning
import OpenAPIRuntime

/// The app's side of Gatehouse, as the seed SDKs offer it: device start with a ready signal,
/// ztokens, request signatures, attestation tokens (solved, bound, prefetched), and STS credentials
/// for object storage. docs/client.md maps each seed's calls to these.
public actor Gatehouse {
    /// What the seed's init takes: where Gatehouse is, the app's keys, the device, logging.
    public struct Configuration: Sendable {
        /// The Gatehouse server, such as `https://gatehouse.example.com`.
        public var baseURL: URL
        /// The app's 5-character key (`appKey`).
        public var appKey: String
        /// The app's SDK secret (`secretKey`), which signs every `/v1/sdk` request.
        public var secretKey: String
        /// The app's own id for this installation (the seed's `deviceId` parameter).
        public var clientDeviceID: String
        /// The seed's collection mode: 0 collects everything, higher values less (docs/sdk-protocol.md).
        public var collectType: Int
        /// The platform the app is registered for.
        public var platform: Components.Schemas.Platform
        /// How much the client logs; `.none` (the default) is silent.
        public var logLevel: GatehouseLogLevel
        /// Where log lines go (standard output unless set); lines never carry a secret or whole token.
        public var logSink: @Sendable (GatehouseLogLevel, String) -> Void
        /// How every call to Gatehouse travels: by default URLSession on Apple platforms and
        /// AsyncHTTPClient on Linux; `URLSessionTransport(configuration: .init(session: yours))` for an
        /// app's own proxy or pinning delegate.
        public var transport: any ClientTransport
        /// App Attest for attesters that require hardware (`DeviceCheckAppAttest()` on a device);
        /// nil where the app has none, and such attesters refuse it.
        public var appAttest: (any AppAttestKeyService)?
        /// The App Attest key id an earlier run attested (see `Gatehouse.appAttestKeyID`), so that a
        /// restarted app asserts instead of attesting again.
        public var appAttestKeyID: String?

        /// The configuration; only the server, the app's keys and the device id are required.
        public init(
            baseURL: URL,
            appKey: String,
            secretKey: String,
            clientDeviceID: String,
            collectType: Int = 0,
            platform: Components.Schemas.Platform = .ios,
            logLevel: GatehouseLogLevel = .none,
            logSink: @escaping @Sendable (GatehouseLogLevel, String) -> Void = { level, message in print("[gatehouse \(level)] \(message)") },
            transport: any ClientTransport = defaultTransport(),
            appAttest: (any AppAttestKeyService)? = nil,
            appAttestKeyID: String? = nil
        ) {
            self.appAttest = appAttest
            self.appAttestKeyID = appAttestKeyID
            self.baseURL = baseURL
            self.appKey = appKey
            self.secretKey = secretKey
            self.clientDeviceID = clientDeviceID
            self.collectType = collectType
            self.platform = platform
            self.logLevel = logLevel
            self.logSink = logSink
            self.transport = transport
        }
    }

    /// An attestation token and where it travels.
    public struct AttestationToken: Sendable, Equatable {
        /// The compact JWS to send.
        public let token: String
        /// The header it goes in (the attester's, `EO-Attest-Token` unless configured).
        public let header: String
        /// Its `exp`; the client attests again before handing out a token this close to it.
        public let expiresAt: Date
        /// The value the token is bound to (`pay`), if any.
        public let boundValue: String?
    }

    let configuration: Configuration
    let api: SDKClient
    let log: GatehouseLogger
    private(set) public var deviceID: String?
    private var deviceKey: String?
    private let minter = ZTokenMinter()
    private var readyHandler: (@Sendable (String) -> Void)?
    var boundValue: String?
    var tokens: [String: AttestationToken] = [:]
    var federation: [String: FederationToken] = [:]
    let appAttestKeys: AppAttestKeyring?

    /// A client for one app; call `start()` before anything that needs the device.
    public init(_ configuration: Configuration) {
        self.configuration = configuration
        api = SDKClient(
            baseURL: configuration.baseURL,
            appKey: configuration.appKey,
            secretKey: configuration.secretKey,
            transport: configuration.transport
        )
        self.log = GatehouseLogger(level: configuration.logLevel, sink: configuration.logSink)
        appAttestKeys = configuration.appAttest.map { AppAttestKeyring(service: $0, keyID: configuration.appAttestKeyID) }
    }

    /// The App Attest key this device attested, for the app to keep across launches.
    public var appAttestKeyID: String? {
        get async { await appAttestKeys?.keyID }
    }

    // MARK: Device start and ztokens

    /// Called once with the device id when the first start completes (the seed's `ZInfoReadyHandler`).
    public func onReady(_ handler: @escaping @Sendable (String) -> Void) {
        if let deviceID { handler(deviceID) } else { readyHandler = handler }
    }

    /// Starts (or re-initialises) the device: sends what the collection mode allows and gets the
    /// device id and the device key that signs requests. A re-start rotates the key.
    @discardableResult
    public func start(
        unique: Components.Schemas.DeviceStartRequest.UniquePayload? = nil,
        environment: Components.Schemas.DeviceStartRequest.EnvironmentPayload? = nil
    ) async throws -> String {
        let body = Components.Schemas.DeviceStartRequest(
            deviceId: configuration.clientDeviceID,
            collectType: configuration.collectType,
            platform: configuration.platform,
            unique: unique,
            environment: environment
        )
        let sentAt = Date()
        let answer = try await sdk("/v1/sdk/device/start") {
            try await $0.startDevice(headers: .init(unsignedFor: configuration.appKey), body: .json(body)).ok.body.json
        }
        guard let grant = Self.ztokenGrant(answer, sentAt: sentAt) else {
            throw GatehouseClientError.sdk(code: -8, reason: "malformed_answer", message: "device start answered without a ztoken key.")
        }
        let id = answer.deviceId
        deviceID = id
        deviceKey = answer.deviceKey
        minter.update(grant)
        log.log(.info, "device started: \(id)")
        if let handler = readyHandler {
            readyHandler = nil
            handler(id)
        }
        return id
    }

    /// A ztoken for this event and account, minted here at once with no network call (the seed's
    /// synchronous `getZInfoWithEvent`). Never cached: each one is single use, as the seed insists.
    /// Throws `notStarted` before the first start, and an SDK -10 for an event the app has not
    /// registered or an account id out of bounds.
    public nonisolated func zToken(event: Int, account: String) throws -> String {
        let token = try minter.mint(event: event, account: account)
        log.log(.debug, "ztoken for event \(event): \(GatehouseLogger.redacted(token))")
        return token
    }

    /// A ztoken minted by the server (`/v1/sdk/ztoken`), for a client that wants the server's clock
    /// and registration checks in the loop: the same format and the same single use.
    public func serverZToken(event: Int, account: String) async throws -> String {
        let body = Components.Schemas.ZTokenRequest(deviceId: try started(), eventId: event, accountId: account)
        return try await sdk("/v1/sdk/ztoken") {
            try await $0.issueZToken(headers: .init(unsignedFor: configuration.appKey), body: .json(body)).ok.body.json.z
        }
    }

    static func ztokenGrant(_ answer: Components.Schemas.DeviceStartResponse, sentAt: Date) -> ZTokenMinter.Grant? {
        guard let key = Base64URL.decode(answer.ztokenKey), key.count == 32,
            let context = Base64URL.decode(answer.ztokenContext), context.count == ZTokenFormat.contextByteCount
        else { return nil }
        let (ttl, events, serverTime) = (answer.ztokenTtlSeconds, answer.events, answer.serverTime)
        // The server's clock read somewhere between sending and answering: the midpoint errs least.
        let deviceTime = sentAt.addingTimeInterval(Date().timeIntervalSince(sentAt) / 2)
        return ZTokenMinter.Grant(
            key: SymmetricKey(data: key),
            context: context,
            ttlSeconds: ttl,
            events: Set(events),
            clockOffset: serverTime.timeIntervalSince(deviceTime)
        )
    }

    /// The H5 bridge (`getZInfoWithBridgeEvent`), synchronous and offline like `zToken`: the event
    /// comes from the page's JSON (`eventId`, a number or a string of digits), the account is the
    /// page's user. The page's URL is checked (http or https) but goes nowhere: a decision on a token
    /// minted here has no `pageUrl`; `serverBridgeZToken` gives one that has.
    public nonisolated func bridgeZToken(pageJSON: String, pageURL: String, account: String) throws -> String {
        guard let page = try? JSONSerialization.jsonObject(with: Data(pageJSON.utf8)) as? [String: Any],
            let event = (page["eventId"] as? Int) ?? (page["eventId"] as? String).flatMap({ Int($0) })
        else {
            throw GatehouseClientError.sdk(code: -10, reason: "invalid_bridge_parameters", message: "The page's JSON must name its eventId.")
        }
        guard pageURL.utf8.count <= 2048, let url = URL(string: pageURL), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
            url.host != nil
        else {
            throw GatehouseClientError.sdk(code: -10, reason: "invalid_bridge_parameters", message: "The page's URL must be http(s).")
        }
        return try zToken(event: event, account: account)
    }

    /// The H5 bridge through the server (`/v1/sdk/ztoken/bridge`): the same format, and the page's URL
    /// noted with the token, so that its decision shows `pageUrl`.
    public func serverBridgeZToken(pageJSON: String, pageURL: String, clientID: String, account: String) async throws -> String {
        let body = Components.Schemas.BridgeZTokenRequest(deviceId: try started(), js: pageJSON, url: pageURL, c: clientID, a: account)
        return try await sdk("/v1/sdk/ztoken/bridge") {
            try await $0.issueBridgeZToken(headers: .init(unsignedFor: configuration.appKey), body: .json(body)).ok.body.json.z
        }
    }

    // MARK: Request signatures

    /// The signer for `wToken` / `ali_sign_whash` with this device's current key.
    public func requestSigner() throws -> RequestSigner {
        guard let deviceID, let deviceKey, let signer = RequestSigner(deviceID: deviceID, deviceKey: deviceKey) else {
            throw GatehouseClientError.notStarted
        }
        return signer
    }

    /// `vmpHash`: the whash of a URL (GET, DELETE) or body.
    public func whash(_ input: Data) throws -> String { try requestSigner().whash(input) }

    /// `vmpSign`: the wtoken over `data` for `method`.
    public func wtoken(_ data: Data, method: String) throws -> String { try requestSigner().wtoken(data, method: method) }

    /// `cptCheck`: 1 when a response asks for secondary verification (the slider captcha), else 0.
    public nonisolated static func cptCheck(cookie: String?, body: Data?) -> Int {
        SecondaryVerificationCheck.cptCheck(cookie: cookie, body: body)
    }

    // MARK: Plumbing

    func started() throws -> String {
        guard let deviceID else { throw GatehouseClientError.notStarted }
        return deviceID
    }

    /// A call through the generated client (signed by `SDKSigningMiddleware`): its answer, or the
    /// SDK's refusal as an error, logged.
    func sdk<Answer>(_ path: String, _ call: (Client) async throws -> Answer) async throws -> Answer {
        do {
            return try await call(api.client)
        } catch let error as ClientError {
            guard let refusal = error.underlyingError as? GatehouseClientError else { throw error }
            if case .sdk(let code, let reason, _) = refusal { log.log(.warn, "\(path) refused: \(code) \(reason)") }
            throw refusal
        }
    }

    static func parseDate(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}
