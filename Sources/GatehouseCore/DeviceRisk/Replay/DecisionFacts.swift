import Foundation

/// What a decision was judged on beyond its own columns (event, account, device id, token state,
/// client address, user agent, time): the token's age, the device as read, the velocity counts and
/// whether the app required hardware. Stored with the decision, so that a replay re-judges it with
/// another policy exactly as the live query would have (`RiskEngine.verdict`), without the device
/// rows, which change after the fact.
///
/// The velocity counts are what the query read: exact up to the thresholds in force then (and over
/// them), so a replay with a lower threshold is exact and one with a higher threshold sees "over the
/// old one" as its count.
public struct DecisionFacts: Equatable, Sendable {
    /// The device as the query read it: what the tags and the rules' `device` variable look at.
    public struct DeviceSnapshot: Equatable, Sendable {
        public var firstSeen: Date
        public var lastSeen: Date
        public var mode: CollectionMode
        public var platform: Platform?
        public var environment: EnvironmentSignals
        public var startedFrom: String?
        public var hardware: HardwareAttestationState
        public var integrity: PlayIntegrityState?

        public init(
            firstSeen: Date,
            lastSeen: Date,
            mode: CollectionMode,
            platform: Platform?,
            environment: EnvironmentSignals,
            startedFrom: String?,
            hardware: HardwareAttestationState
        ) {
            self.firstSeen = firstSeen
            self.lastSeen = lastSeen
            self.mode = mode
            self.platform = platform
            self.environment = environment
            self.startedFrom = startedFrom
            self.hardware = hardware
        }

        /// The facts of a device the judge reads; of its hardware, what the tags and rules look at.
        public init(_ device: Device) {
            var hardware = device.hardware
            if case .attested(let facts, let time) = hardware {
                let read = HardwareFacts(
                    app: "",
                    securityLevel: facts.securityLevel,
                    verifiedBoot: facts.verifiedBoot,
                    deviceLocked: facts.deviceLocked,
                    osPatchLevel: facts.osPatchLevel
                )
                hardware = .attested(read, at: time)
            }
            self.init(
                firstSeen: device.firstSeen,
                lastSeen: device.lastSeen,
                mode: device.mode,
                platform: device.platform,
                environment: device.environment,
                startedFrom: device.lastAddress,
                hardware: hardware
            )
            integrity = device.integrity
        }

        /// The device again, as the judge reads it (what it does not read left empty).
        public func device(appID: AppID, id: DeviceID) -> Device {
            var device = Device(
                appID: appID,
                id: id,
                clientDeviceID: "",
                mode: mode,
                platform: platform,
                sdkVersion: nil,
                basic: nil,
                unique: nil,
                extra: nil,
                environment: environment,
                firstSeen: firstSeen,
                lastSeen: lastSeen,
                lastAddress: startedFrom
            )
            device.hardware = hardware
            device.integrity = integrity
            return device
        }
    }

    /// From the token's issue to the query, when the token named one.
    public var tokenAge: TimeInterval?
    public var device: DeviceSnapshot?
    public var velocity: Velocity?
    public var hardwareRequired: Bool

    public init(tokenAge: TimeInterval?, device: DeviceSnapshot?, velocity: Velocity?, hardwareRequired: Bool) {
        self.tokenAge = tokenAge
        self.device = device
        self.velocity = velocity
        self.hardwareRequired = hardwareRequired
    }
}
