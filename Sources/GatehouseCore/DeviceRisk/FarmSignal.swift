import Foundation

/// The farm signal: a phone farm passes every device check one device at a time, so what gives it
/// away is how many new attested keys (App Attest, Android key attestation) and Play Integrity
/// verdicts one address, one network or one account shows in a window. Apple's own fraud metric
/// (the receipt's risk metric) needs Apple's server and is not used here.
public enum AttestationFarm {
    /// One attestation as the farm counts see it: who showed it (the address and its network) and what
    /// was attested (a key id, or for Play Integrity the device id, counted once however often it asks).
    public struct Sighting: Sendable, Equatable {
        public let address: String
        public let network: String
        public let member: String

        public init?(address: String?, member: String) {
            guard let address, let parsed = IPAddress(address) else { return nil }
            self.address = parsed.description
            network = AttestationFarm.network(of: parsed)
            self.member = member
        }
    }

    /// The /24 of an IPv4 address or the /48 of an IPv6 one: what one site or subscriber line holds.
    public static func network(of address: IPAddress) -> String {
        let bytes = address.bytes
        if bytes.count == 4 { return "\(bytes[0]).\(bytes[1]).\(bytes[2]).0/24" }
        let groups = stride(from: 0, to: 6, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/48"
    }

    /// Each count over its threshold, as the `attestation.farm` tag with its sentence.
    static func hits(_ counts: AttestationCounts, rules: EffectiveRiskRules) -> [(RiskTag, String)] {
        let checks: [(Int, Int, String)] = [
            (counts.addressLastHour, rules.maxAddressAttestationsPerHour, "attested devices from this address in the last hour"),
            (counts.networkLastHour, rules.maxNetworkAttestationsPerHour, "attested devices from this address's network in the last hour"),
            (counts.accountLastDay, rules.maxAccountAttestationsPerDay, "newly attested devices of this account in the last day"),
        ]
        return checks.filter { $0.0 > $0.1 }.map { (.attestationFarm, "\($0.0) \($0.2), over \($0.1).") }
    }
}

/// The farm counts a risk query read, each exact up to its threshold and "over it" past.
public struct AttestationCounts: Equatable, Sendable {
    public var addressLastHour: Int
    public var networkLastHour: Int
    public var accountLastDay: Int

    public static let none = AttestationCounts(addressLastHour: 0, networkLastHour: 0, accountLastDay: 0)

    public init(addressLastHour: Int, networkLastHour: Int, accountLastDay: Int) {
        self.addressLastHour = addressLastHour
        self.networkLastHour = networkLastHour
        self.accountLastDay = accountLastDay
    }
}
