/// What a rule's expression may name: the facts a risk decision is made of (docs/risk.md lists each
/// with its meaning). Optional fields are absent when the fact is unknown (a device never started has
/// no `firstSeen`): `has(device.firstSeen)` asks.
public enum RuleVariables {
    /// Where each variable and field sits for a compiled rule (`FactLayout`).
    public static let layout = FactLayout(environment)

    public static let environment = ExpressionEnvironment(
        variables: [
            "token": .object("Token"),
            "event": .int,
            "account": .string,
            "client": .object("Client"),
            "device": .object("Device"),
            "velocity": .object("Velocity"),
            "lists": .object("Lists"),
            "tags": .list(.string),
            "score": .int,
            "now": .timestamp,
        ],
        objects: [
            "Token": ["state": .init(.string), "age": .init(.duration, optional: true)],
            "Client": ["address": .init(.string), "userAgent": .init(.string, optional: true)],
            "Device": [
                "known": .init(.bool),
                "id": .init(.string, optional: true),
                "firstSeen": .init(.timestamp, optional: true),
                "lastSeen": .init(.timestamp, optional: true),
                "platform": .init(.string, optional: true),
                "collectionMode": .init(.int, optional: true),
                "startedFrom": .init(.string, optional: true),
                "signals": .init(.map(key: .string, value: .bool)),
                "attestation": .init(.string, optional: true),
                "securityLevel": .init(.string, optional: true),
                "attestationFailed": .init(.bool),
                "verifiedBoot": .init(.bool, optional: true),
                "osPatchLevel": .init(.int, optional: true),
                "playIntegrity": .init(.string, optional: true),
                "playIntegrityRefusal": .init(.string, optional: true),
                "playIntegrityAt": .init(.timestamp, optional: true),
                "appRecognition": .init(.string, optional: true),
                "appLicensing": .init(.string, optional: true),
                "appVersionCode": .init(.int, optional: true),
                "deviceActivity": .init(.string, optional: true),
                "appsDetected": .init(.list(.string)),
                "playProtect": .init(.string, optional: true),
            ],
            "Velocity": [
                "deviceEventsLastMinute": .init(.int), "deviceAccountsLastDay": .init(.int), "accountDevicesLastDay": .init(.int),
                "ipDevicesLastHour": .init(.int), "addressAttestationsLastHour": .init(.int), "networkAttestationsLastHour": .init(.int),
                "accountAttestationsLastDay": .init(.int),
            ],
            "Lists": ["deny": .init(.bool), "allow": .init(.bool), "challenge": .init(.bool)],
        ]
    )
}
