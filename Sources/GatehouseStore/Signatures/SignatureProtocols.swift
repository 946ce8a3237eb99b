import Foundation
import GatehouseCore

/// What verifying a request signature needs to know about its device, read in one query.
public struct SigningState: Sendable, Equatable {
    public let device: Device
    public let denied: Bool
    /// The device's latest risk decision within the secondary-verification window, if any.
    public let latestDecision: RiskDecision?

    public init(device: Device, denied: Bool, latestDecision: RiskDecision?) {
        self.device = device
        self.denied = denied
        self.latestDecision = latestDecision
    }
}

public protocol SignatureStore: Sendable {
    /// The device, whether operators deny it, and its latest decision since `decidedAfter`; nil for
    /// a device this app never started.
    func signingState(appID: AppID, deviceID: DeviceID, decidedAfter: Date) async throws(StoreError) -> SigningState?
    /// Remembers, for an hour, that a known device's signature failed.
    func recordSignatureFailure(appID: AppID, deviceID: DeviceID, reason: SignatureFailure, at now: Date) async throws(StoreError)
}
