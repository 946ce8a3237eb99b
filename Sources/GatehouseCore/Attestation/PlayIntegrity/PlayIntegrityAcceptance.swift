import Foundation

/// A Play Integrity verdict taken where hardware attestation is required: read by the app's
/// `playIntegrity` attester `attestID` (its keys, package and checks), at `minimumIntegrity` or above.
public struct PlayIntegrityAcceptance: Sendable, Equatable, Codable {
    public let attestID: AttestID
    public let minimumIntegrity: PlayIntegrityLevel

    public init(attestID: AttestID, minimumIntegrity: PlayIntegrityLevel) {
        self.attestID = attestID
        self.minimumIntegrity = minimumIntegrity
    }

    /// As the operator names it: an attestId and `basic`, `device` or `strong`.
    public init(attestID: String, minimumIntegrity: String) throws(DomainError) {
        self.attestID = try AttestID(validating: attestID)
        guard let level = PlayIntegrityLevel(rawValue: minimumIntegrity), level != .virtual else {
            throw DomainError(
                .invalidAttester,
                "acceptPlayIntegrity.minimumIntegrity is basic, device or strong.",
                field: "acceptPlayIntegrity.minimumIntegrity"
            )
        }
        self.minimumIntegrity = level
    }
}

extension AttestID: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do { try self.init(validating: text) } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.detail))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

extension Attester {
    /// The Play Integrity settings go with their kind only, and a verdict stands in for hardware only
    /// where hardware is required.
    func checkPlayIntegrity() throws(DomainError) {
        guard (kind == .playIntegrity) == (playIntegrity != nil) else {
            throw DomainError(.invalidAttester, "playIntegrity settings go with kind playIntegrity, and only with it.", field: "playIntegrity")
        }
        if kind == .playIntegrity, requireHardwareAttestation {
            throw DomainError(
                .invalidAttester,
                "A playIntegrity attester stands on Google's verdict, not a hardware key: name the lowest verdict with playIntegrity.minimumIntegrity.",
                field: "requireHardwareAttestation"
            )
        }
        if let acceptPlayIntegrity {
            guard requiresHardware, kind != .playIntegrity else {
                throw DomainError(
                    .invalidAttester,
                    "acceptPlayIntegrity goes with an attester that requires hardware attestation.",
                    field: "acceptPlayIntegrity"
                )
            }
            guard acceptPlayIntegrity.attestID != attestID else {
                throw DomainError(.invalidAttester, "acceptPlayIntegrity names a playIntegrity attester of the app.", field: "acceptPlayIntegrity")
            }
        }
    }
}
