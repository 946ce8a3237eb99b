// STS: roles, temporary credentials from upstream STS services, OSS self-signing, presigned URLs.
// Serves seed 004 (the OSS SDK's STS and self-signed modes and signed URLs).

import GatehouseCore

/// One upstream call per cache key at a time within this instance: callers that arrive while a
/// call is running wait for its answer instead of starting their own.
actor CredentialFlights {
    private var running: [String: Task<TemporaryCredentials, any Error>] = [:]

    func run(_ key: String, _ work: @escaping @Sendable () async throws -> TemporaryCredentials) async throws -> TemporaryCredentials {
        if let task = running[key] { return try await task.value }
        let task = Task { try await work() }
        running[key] = task
        defer { running[key] = nil }
        return try await task.value
    }
}
