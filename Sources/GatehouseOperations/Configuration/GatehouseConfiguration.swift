import Configuration
import Foundation
import GatehouseCore
import GatehouseStore
import Logging

/// Everything the service reads at start, once. This doc comment is the configuration reference:
/// each key is given as its environment variable; `gatehouse serve` flags override the first two.
///
/// - `GATEHOUSE_HOSTNAME` (string, default `127.0.0.1`, flag `--hostname`): address to listen on.
/// - `GATEHOUSE_PORT` (int, default `8080`, flag `--port`): port to listen on; 0 picks a free one.
/// - `GATEHOUSE_PROBE_PORT` (int, default none): a second port serving only `/health/live`,
///   `/health/ready` and `/metrics`, on an event loop of its own, for the orchestrator and Prometheus.
/// - `GATEHOUSE_DATABASE_URL` (string, secret, optional): `postgres://user:password@host:5432/db?sslmode=...`.
///   When absent, the embedded SQLite file `gatehouse.sqlite` in the data directory is used.
/// - `GATEHOUSE_DATABASE_MAX_CONNECTIONS` (int, default `20`): PostgreSQL pool size per instance.
/// - `GATEHOUSE_DATABASE_TIMEOUT_SECONDS` (int, default `5`): the longest a request waits for any one
///   database statement or transaction (and for a new connection); then it answers 503 with `Retry-After`.
/// - `GATEHOUSE_DATA_DIR` (string, default `./gatehouse-data`): where the SQLite file and a development
///   master key live.
/// - `GATEHOUSE_MASTER_KEY` (string, secret, optional): base64 of 32 random bytes; seals app secrets.
/// - `GATEHOUSE_MASTER_KEY_FILE` (string, optional): a file holding that base64 key instead.
///   With neither set, SQLite mode generates `master.key` in the data directory (with a warning);
///   PostgreSQL mode refuses to start.
/// - `GATEHOUSE_MIGRATE_AT_START` (bool, default `false` with PostgreSQL, `true` with SQLite): apply
///   pending migrations before listening. Otherwise run `gatehouse migrate`.
/// - `GATEHOUSE_LOG_LEVEL` (string, default `info`): trace, debug, info, notice, warning, error, critical.
/// - `GATEHOUSE_TRUSTED_PROXIES` (string, default empty): comma-separated CIDRs whose
///   `X-Forwarded-For` is believed, e.g. `10.0.0.0/8,fd00::/8`.
/// - `GATEHOUSE_MAX_BODY_BYTES` (int, default `65536`): larger request bodies get 413.
/// - `GATEHOUSE_BODY_TIMEOUT_SECONDS` (int, default `10`): a request body must arrive within this; 408 otherwise.
/// - `GATEHOUSE_IDLE_TIMEOUT_SECONDS` (int, default `15`): a connection that sends no complete request
///   head for this long (idle keep-alive, or headers that trickle in) is closed.
/// - `GATEHOUSE_MAX_CONNECTIONS` (int, default `4096`): connections held open at once; more wait in the
///   listen backlog. Never more than the process's file limit allows.
/// - `GATEHOUSE_MAX_IN_FLIGHT` (int, default `256`): requests worked on at once; more get 503 with
///   `Retry-After` at once (the SDK's -8). Health probes and metrics are never refused.
/// - `GATEHOUSE_PURGE_INTERVAL_SECONDS` (int, default `600`): how often expired ztokens, decisions and
///   nonces are deleted; 0 turns the purger off on this instance.
/// - `GATEHOUSE_ISSUER` (string, default `gatehouse`): the `iss` claim of attestation tokens; backends
///   that verify tokens themselves check it.
/// - `GATEHOUSE_CAPTCHA_CHALLENGES_PER_MINUTE` (int, default `30`): captcha challenges one client
///   address, and separately one device, may fetch per minute on one instance; more get 429.
/// - `GATEHOUSE_CAPTCHA_ANSWERS_PER_MINUTE` (int, default `60`): captcha answers one client address
///   may send per minute on one instance.
/// - `GATEHOUSE_ATTEST_REQUESTS_PER_MINUTE` (int, default `60`): attestation challenges, and separately
///   token redemptions, that one client address, and separately one device, may ask for per minute
///   on one instance; more get 429 (the SDK's -8).
/// - `GATEHOUSE_GATE_CREDENTIAL_HEADER` (string, default `X-Gatehouse-Authorization`): the one header
///   `/v1/gate/verify` reads the gateway's Basic credential from; `Authorization` when the proxy sets
///   that instead. No other header is read, so a client's copy of another one never counts.
/// - `GATEHOUSE_CAPTCHA_EMBED_ORIGINS` (string, default empty): comma-separated origins
///   (`https://shop.example.com`) that may frame the captcha page or open it as a pop-up and receive
///   its result by postMessage; this service's own origin always may.
/// - `GATEHOUSE_STS_PRIVATE_ENDPOINTS` (bool, default `false`): let STS roles call plain `http` and
///   loopback, private and link-local addresses (an internal MinIO, LocalStack or moto); otherwise a
///   role's `stsEndpoint` is `https` to a public name or address. Read by `serve` and `role` commands.
/// - `GATEHOUSE_PLAY_INTEGRITY_TIMEOUT_MS` (default `5000`, 100 to 30000): how long a standard Play
///   Integrity token may wait for Google (the access token and the decode call together) before the
///   device is told to retry.
/// - `GATEHOUSE_ANDROID_REVOCATION_LIST` (string, default none): a file holding Google's attestation
///   status list (JSON from https://android.googleapis.com/attestation/status); read at start and
///   again within a minute of each change. Chains with a listed certificate are refused.
/// - `GATEHOUSE_TEST_ATTESTATION_ROOTS` (string, default none): a PEM file of extra roots trusted for
///   App Attest and Android Key Attestation alike. For test devices only (a warning is logged):
///   whoever holds such a root's key can attest any device.
public struct GatehouseConfiguration: Sendable {
    public var hostname: String
    public var port: Int
    public var probePort: Int?
    public var databaseURL: String?
    public var databaseMaxConnections: Int
    public var databaseTimeoutSeconds: Int
    public var dataDirectory: String
    public var masterKey: String?
    public var masterKeyFile: String?
    public var migrateAtStart: Bool
    public var logLevel: Logger.Level
    public var trustedProxies: [CIDR]
    public var maxBodyBytes: Int
    public var bodyTimeoutSeconds: Int
    public var idleTimeoutSeconds: Int
    public var maxConnections: Int
    public var maxInFlight: Int
    public var purgeIntervalSeconds: Int
    public var issuer: String
    public var captchaChallengesPerMinute: Int
    public var captchaAnswersPerMinute: Int
    public var attestRequestsPerMinute: Int
    public var gateCredentialHeader: String
    public var captchaEmbedOrigins: [String]
    public var stsPrivateEndpoints: Bool
    public var playIntegrityTimeoutMilliseconds: Int = 5_000
    public var androidRevocationList: String?
    public var testAttestationRoots: String?

    public init(
        hostname: String = "127.0.0.1",
        port: Int = 8080,
        probePort: Int? = nil,
        databaseURL: String? = nil,
        databaseMaxConnections: Int = 20,
        databaseTimeoutSeconds: Int = 5,
        dataDirectory: String = "./gatehouse-data",
        masterKey: String? = nil,
        masterKeyFile: String? = nil,
        migrateAtStart: Bool? = nil,
        logLevel: Logger.Level = .info,
        trustedProxies: [CIDR] = [],
        maxBodyBytes: Int = 65_536,
        bodyTimeoutSeconds: Int = 10,
        idleTimeoutSeconds: Int = 15,
        maxConnections: Int = 4096,
        maxInFlight: Int = 256,
        purgeIntervalSeconds: Int = 600,
        issuer: String = "gatehouse",
        captchaChallengesPerMinute: Int = 30,
        captchaAnswersPerMinute: Int = 60,
        attestRequestsPerMinute: Int = 60,
        gateCredentialHeader: String = "X-Gatehouse-Authorization",
        captchaEmbedOrigins: [String] = [],
        stsPrivateEndpoints: Bool = false,
        androidRevocationList: String? = nil,
        testAttestationRoots: String? = nil
    ) {
        self.androidRevocationList = androidRevocationList
        self.testAttestationRoots = testAttestationRoots
        self.hostname = hostname
        self.port = port
        self.probePort = probePort
        self.databaseURL = databaseURL
        self.databaseMaxConnections = databaseMaxConnections
        self.databaseTimeoutSeconds = databaseTimeoutSeconds
        self.dataDirectory = dataDirectory
        self.masterKey = masterKey
        self.masterKeyFile = masterKeyFile
        self.migrateAtStart = migrateAtStart ?? (databaseURL == nil)
        self.logLevel = logLevel
        self.trustedProxies = trustedProxies
        self.maxBodyBytes = maxBodyBytes
        self.bodyTimeoutSeconds = bodyTimeoutSeconds
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.maxConnections = maxConnections
        self.maxInFlight = maxInFlight
        self.purgeIntervalSeconds = purgeIntervalSeconds
        self.issuer = issuer
        self.captchaChallengesPerMinute = captchaChallengesPerMinute
        self.captchaAnswersPerMinute = captchaAnswersPerMinute
        self.attestRequestsPerMinute = attestRequestsPerMinute
        self.gateCredentialHeader = gateCredentialHeader
        self.captchaEmbedOrigins = captchaEmbedOrigins
        self.stsPrivateEndpoints = stsPrivateEndpoints
    }

    /// Reads the keys above from `reader` (scoped so that `database.url` is `GATEHOUSE_DATABASE_URL`).
    /// Over 60 lines: one argument per setting, each read where the call names it.
    public init(reader: ConfigReader) throws(ConfigurationError) {
        let gatehouse = reader.scoped(to: "gatehouse")
        let levelText = gatehouse.string(forKey: "log.level", default: "info")
        guard let level = Logger.Level(rawValue: levelText) else {
            throw ConfigurationError("GATEHOUSE_LOG_LEVEL '\(levelText)' is not a log level")
        }
        var proxies: [CIDR] = []
        for text in gatehouse.string(forKey: "trusted.proxies", default: "").split(separator: ",") {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            guard let cidr = CIDR(trimmed) else { throw ConfigurationError("GATEHOUSE_TRUSTED_PROXIES: '\(trimmed)' is not a CIDR") }
            proxies.append(cidr)
        }
        let port = gatehouse.int(forKey: "port", default: 8080)
        guard (0...65535).contains(port) else { throw ConfigurationError("GATEHOUSE_PORT \(port) is not a port") }
        let probePort = gatehouse.int(forKey: "probe.port")
        if let probePort, !(1...65535).contains(probePort) || probePort == port {
            throw ConfigurationError("GATEHOUSE_PROBE_PORT \(probePort) is not a port other than GATEHOUSE_PORT")
        }
        let databaseURL = gatehouse.string(forKey: "database.url", isSecret: true)
        let gateHeader = gatehouse.string(forKey: "gate.credential.header", default: "X-Gatehouse-Authorization")
        guard GateCredentialHeader.isAcceptable(gateHeader) else {
            throw ConfigurationError("GATEHOUSE_GATE_CREDENTIAL_HEADER '\(gateHeader)' is not a header a proxy can set for the gate")
        }
        var embedOrigins: [String] = []
        for text in gatehouse.string(forKey: "captcha.embed.origins", default: "").split(separator: ",") {
            let origin = text.trimmingCharacters(in: .whitespaces)
            guard WebOrigin.isOrigin(origin) else {
                throw ConfigurationError("GATEHOUSE_CAPTCHA_EMBED_ORIGINS: '\(origin)' is not an origin such as https://shop.example.com")
            }
            embedOrigins.append(origin)
        }
        var configuration = GatehouseConfiguration(
            hostname: gatehouse.string(forKey: "hostname", default: "127.0.0.1"),
            port: port,
            probePort: probePort,
            databaseURL: databaseURL?.isEmpty == true ? nil : databaseURL,
            databaseMaxConnections: gatehouse.int(forKey: "database.max.connections", default: 20),
            databaseTimeoutSeconds: min(120, max(1, gatehouse.int(forKey: "database.timeout.seconds", default: 5))),
            dataDirectory: gatehouse.string(forKey: "data.dir", default: "./gatehouse-data"),
            masterKey: gatehouse.string(forKey: "master.key", isSecret: true),
            masterKeyFile: gatehouse.string(forKey: "master.key.file"),
            migrateAtStart: gatehouse.bool(forKey: "migrate.at.start"),
            logLevel: level,
            trustedProxies: proxies,
            maxBodyBytes: gatehouse.int(forKey: "max.body.bytes", default: 65_536),
            bodyTimeoutSeconds: min(300, max(1, gatehouse.int(forKey: "body.timeout.seconds", default: 10))),
            idleTimeoutSeconds: min(3600, max(1, gatehouse.int(forKey: "idle.timeout.seconds", default: 15))),
            maxConnections: max(16, gatehouse.int(forKey: "max.connections", default: 4096)),
            maxInFlight: max(1, gatehouse.int(forKey: "max.in.flight", default: 256)),
            purgeIntervalSeconds: max(0, gatehouse.int(forKey: "purge.interval.seconds", default: 600)),
            issuer: gatehouse.string(forKey: "issuer", default: "gatehouse"),
            captchaChallengesPerMinute: max(1, gatehouse.int(forKey: "captcha.challenges.per.minute", default: 30)),
            captchaAnswersPerMinute: max(1, gatehouse.int(forKey: "captcha.answers.per.minute", default: 60)),
            attestRequestsPerMinute: max(1, gatehouse.int(forKey: "attest.requests.per.minute", default: 60)),
            gateCredentialHeader: gateHeader,
            captchaEmbedOrigins: embedOrigins,
            stsPrivateEndpoints: gatehouse.bool(forKey: "sts.private.endpoints", default: false),
            androidRevocationList: gatehouse.string(forKey: "android.revocation.list"),
            testAttestationRoots: gatehouse.string(forKey: "test.attestation.roots")
        )
        configuration.playIntegrityTimeoutMilliseconds = min(30_000, max(100, gatehouse.int(forKey: "play.integrity.timeout.ms", default: 5_000)))
        self = configuration
    }

    public var storeLocation: StoreLocation {
        if let databaseURL { return .postgres(url: databaseURL) }
        return .sqlite(path: (dataDirectory as NSString).appendingPathComponent("gatehouse.sqlite"))
    }

    /// The master key from the environment or its file; in SQLite mode, one generated on first start.
    /// - Returns: the box, and whether the key was generated just now (the caller warns).
    public func loadSecretBox() throws -> (box: SecretBox, generatedAt: String?) {
        if let masterKey {
            return (try SecretBox(base64MasterKey: masterKey), nil)
        }
        if let masterKeyFile {
            guard let text = try? String(contentsOfFile: masterKeyFile, encoding: .utf8) else {
                throw ConfigurationError("GATEHOUSE_MASTER_KEY_FILE \(masterKeyFile) cannot be read")
            }
            return (try SecretBox(base64MasterKey: text), nil)
        }
        guard databaseURL == nil else {
            throw ConfigurationError("With PostgreSQL, set GATEHOUSE_MASTER_KEY or GATEHOUSE_MASTER_KEY_FILE (base64 of 32 bytes)")
        }
        let path = (dataDirectory as NSString).appendingPathComponent("master.key")
        if let text = try? String(contentsOfFile: path, encoding: .utf8) {
            return (try SecretBox(base64MasterKey: text), nil)
        }
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        let key = SecretBox.generateBase64MasterKey()
        guard FileManager.default.createFile(atPath: path, contents: Data((key + "\n").utf8), attributes: [.posixPermissions: 0o600])
        else { throw ConfigurationError("cannot write a development master key to \(path)") }
        return (try SecretBox(base64MasterKey: key), path)
    }
}

/// A configuration value that cannot be used; the message names the key, never a secret value.
public struct ConfigurationError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
