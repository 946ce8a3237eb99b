import Foundation

/// The stored form of `DecisionFacts`: a format byte, then flags and variable-length integers, about
/// 30 bytes a decision (docs/PERFORMANCE.md measures it). Not JSON: every risk query writes one and a
/// replay reads a million. A later format gets a new first byte and this reader keeps the old ones:
/// format 2 added the device's Play Integrity verdict and the farm counts (`+PlayIntegrity`).
extension DecisionFacts {
    public static let format: UInt8 = 2

    enum Flag: UInt8 {
        case tokenAge = 1
        case device = 2
        case velocity = 4
        case hardwareRequired = 8
    }

    enum Hardware: UInt8 {
        case none = 0
        case attested = 1
        case failed = 2
    }

    static let securityLevels: [HardwareFacts.SecurityLevel] = [.software, .trustedEnvironment, .strongBox, .secureEnclave]

    public func encoded() -> [UInt8] {
        var out = FactsBytes()
        out.bytes.append(Self.format)
        var flags: UInt8 = hardwareRequired ? Flag.hardwareRequired.rawValue : 0
        if tokenAge != nil { flags |= Flag.tokenAge.rawValue }
        if device != nil { flags |= Flag.device.rawValue }
        if velocity != nil { flags |= Flag.velocity.rawValue }
        out.bytes.append(flags)
        if let tokenAge { out.signed(Int64((tokenAge * 1000).rounded())) }
        if let device { Self.encode(device, into: &out) }
        if let velocity {
            for count in [
                velocity.deviceEventsLastMinute, velocity.deviceAccountsLastDay, velocity.accountDevicesLastDay, velocity.ipDevicesLastHour,
            ] {
                out.unsigned(UInt64(max(0, count)))
            }
            Self.encode(velocity.attestations, into: &out)
        }
        return out.bytes
    }

    static func encode(_ device: DeviceSnapshot, into out: inout FactsBytes) {
        let first = FactsBytes.milliseconds(device.firstSeen)
        out.signed(first)
        out.signed(FactsBytes.milliseconds(device.lastSeen) - first)
        out.unsigned(UInt64(max(0, device.mode.rawValue)))
        out.string(device.platform?.rawValue)
        out.unsigned(UInt64(max(0, device.environment.rawValue)))
        out.string(device.startedFrom)
        switch device.hardware {
        case .none: out.bytes.append(Hardware.none.rawValue)
        case .attested(let facts, let time):
            out.bytes.append(Hardware.attested.rawValue)
            out.date(time)
            out.bytes.append(UInt8(Self.securityLevels.firstIndex(of: facts.securityLevel) ?? 0))
            out.optionalBool(facts.verifiedBoot)
            out.optionalBool(facts.deviceLocked)
            out.signed(Int64(facts.osPatchLevel ?? -1))
        case .failed(let time):
            out.bytes.append(Hardware.failed.rawValue)
            out.date(time)
        }
        encode(device.integrity, into: &out)
    }

    /// Nil for bytes this build cannot read (another format, or cut short): the decision is then
    /// replayed as "facts unknown" and counted apart.
    public init?(decoding bytes: [UInt8]) {
        var input = FactsReader(bytes: bytes)
        guard let format = input.byte(), format == 1 || format == Self.format, let flags = input.byte() else { return nil }
        func has(_ flag: Flag) -> Bool { flags & flag.rawValue != 0 }
        hardwareRequired = has(.hardwareRequired)
        tokenAge = nil
        device = nil
        velocity = nil
        if has(.tokenAge) {
            guard let milliseconds = input.signed() else { return nil }
            tokenAge = TimeInterval(milliseconds) / 1000
        }
        if has(.device) {
            guard var snapshot = Self.decodeDevice(&input) else { return nil }
            if format >= 2 {
                guard let integrity = Self.decodeIntegrity(&input) else { return nil }
                snapshot.integrity = integrity
            }
            device = snapshot
        }
        if has(.velocity) {
            guard let a = input.count(), let b = input.count(), let c = input.count(), let d = input.count() else { return nil }
            velocity = Velocity(deviceEventsLastMinute: a, deviceAccountsLastDay: b, accountDevicesLastDay: c, ipDevicesLastHour: d)
            if format >= 2 {
                guard let counts = Self.decodeAttestations(&input) else { return nil }
                velocity?.attestations = counts
            }
        }
        guard input.atEnd else { return nil }
    }

    static func decodeDevice(_ input: inout FactsReader) -> DeviceSnapshot? {
        guard let first = input.signed(), let last = input.signed(), let firstSeen = FactsReader.date(milliseconds: first),
            let lastSeen = FactsReader.date(milliseconds: first &+ last), let mode = input.count(), let platform = input.string(),
            let environment = input.count(), let startedFrom = input.string(), let kind = input.byte().flatMap(Hardware.init)
        else { return nil }
        var hardware = HardwareAttestationState.none
        switch kind {
        case .none: break
        case .attested:
            guard let time = input.date(), let level = input.byte(), Int(level) < securityLevels.count, let boot = input.optionalBool(),
                let locked = input.optionalBool(), let patch = input.signed(), patch < Int32.max
            else { return nil }
            let facts = HardwareFacts(
                app: "",
                securityLevel: securityLevels[Int(level)],
                verifiedBoot: boot,
                deviceLocked: locked,
                osPatchLevel: patch < 0 ? nil : Int(patch)
            )
            hardware = .attested(facts, at: time)
        case .failed:
            guard let time = input.date() else { return nil }
            hardware = .failed(at: time)
        }
        return DeviceSnapshot(
            firstSeen: firstSeen,
            lastSeen: lastSeen,
            mode: CollectionMode(rawValue: mode),
            platform: platform.flatMap(Platform.init),
            environment: EnvironmentSignals(rawValue: environment),
            startedFrom: startedFrom,
            hardware: hardware
        )
    }
}

/// Little-endian base-128 integers (zigzag for signed ones) and length-prefixed UTF-8.
struct FactsBytes {
    var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(48) }

    mutating func unsigned(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7f) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func signed(_ value: Int64) { unsigned(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    mutating func date(_ date: Date) { signed(Self.milliseconds(date)) }

    static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        return value.isFinite && abs(value) < 9e15 ? Int64(value) : 0
    }

    /// 0 for nil, else the length + 1 and the bytes.
    mutating func string(_ text: String?) {
        guard let text else { return unsigned(0) }
        let utf8 = Array(text.utf8)
        unsigned(UInt64(utf8.count) + 1)
        bytes += utf8
    }

    mutating func optionalBool(_ value: Bool?) { bytes.append(value.map { $0 ? 2 : 1 } ?? 0) }
}

struct FactsReader {
    let bytes: [UInt8]
    var index = 0

    var atEnd: Bool { index == bytes.count }

    mutating func byte() -> UInt8? {
        guard index < bytes.count else { return nil }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func unsigned() -> UInt64? {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 7) {
            guard let next = byte() else { return nil }
            value |= UInt64(next & 0x7f) << UInt64(shift)
            if next < 0x80 { return value }
        }
        return nil
    }

    mutating func signed() -> Int64? {
        guard let raw = unsigned() else { return nil }
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// A count or option set, within `Int`.
    mutating func count() -> Int? {
        guard let raw = unsigned(), raw <= UInt64(Int32.max) else { return nil }
        return Int(raw)
    }

    mutating func date() -> Date? { signed().flatMap(Self.date(milliseconds:)) }

    static func date(milliseconds: Int64) -> Date? {
        guard milliseconds > -253_402_300_800_000, milliseconds < 253_402_300_800_000 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000)
    }

    /// `.some(nil)` for an absent string, nil for bytes that are no string.
    mutating func string() -> String?? {
        guard let length = unsigned(), length <= UInt64(bytes.count - index) + 1 else { return nil }
        guard length > 0 else { return .some(nil) }
        let end = index + Int(length - 1)
        defer { index = end }
        guard let text = String(validating: bytes[index..<end], as: UTF8.self) else { return nil }
        return .some(text)
    }

    mutating func optionalBool() -> Bool?? {
        switch byte() {
        case 0: .some(nil)
        case 1: .some(false)
        case 2: .some(true)
        default: nil
        }
    }
}
