import Foundation
import Testing

/// A start refused after the store opened ends as a refusal (status 1, the reason on standard error),
/// with the database closed: an open SQLite database left to its deinitializer stopped the process
/// with a trap (status 132), a crash an operator's supervisor would restart forever.
@Suite struct RefusedStartTests {
    @Test func anUnreadableAttestationFileRefusesTheStartWithoutACrash() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-refused-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (status, _, errors) = try Peers.run(
            try BuiltServer.executable(),
            ["serve"],
            environment: [
                "GATEHOUSE_DATA_DIR": folder.path, "GATEHOUSE_PORT": "0",
                "GATEHOUSE_ANDROID_REVOCATION_LIST": folder.appendingPathComponent("missing.json").path,
            ]
        )
        #expect(status == 1, "a refusal, not a trap")
        #expect(errors.contains("GATEHOUSE_ANDROID_REVOCATION_LIST"))
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("gatehouse.sqlite").path), "the store had opened")
    }
}
