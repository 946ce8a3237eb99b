import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations
import GatehouseServer
import GatehouseStore
import GatehouseTestSupport
import HTTPTypes
import Testing

/// Admin token roles over loopback HTTP: a viewer reads everything an admin reads and changes nothing.
@Suite struct AdminRoleTests {
    @Test(arguments: TestStoreKind.available)
    func aViewerReadsAndIsRefusedEveryChange(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let created = try await server.send(.post, "/v1/admin/apps", body: #"{"name":"Shop","platforms":["ios"]}"#)
            #expect(created.status == .created)
            let appKey = try #require(created.json?["app"] as? [String: Any])["appKey"] as! String
            let viewerToken = try await StoreService.withStore(server.store.location, logger: TestDatabase.logger) { store in
                try await AdminTokenOperations(store: store.admin, clock: SystemClock()).create(
                    name: "watcher",
                    role: .viewer,
                    origin: ChangeOrigin(actor: Actor(kind: .cli, name: "test"), requestID: nil, sourceAddress: nil)
                )
            }
            let viewer: HTTPFields = [.authorization: "Bearer \(viewerToken)", .contentType: "application/json"]
            for path in [
                "/v1/admin/apps", "/v1/admin/apps/\(appKey)", "/v1/admin/audit", "/v1/admin/apps/\(appKey)/risk/rules",
                "/v1/admin/apps/\(appKey)/risk/policy-rules", "/v1/admin/apps/\(appKey)/risk/policy-versions",
                "/v1/admin/apps/\(appKey)/risk/replays",
            ] {
                #expect(try await server.send(.get, path, headers: viewer).status == .ok, "\(path)")
            }
            let auditBefore = try await server.send(.get, "/v1/admin/audit").body
            let changes: [(HTTPRequest.Method, String, String?)] = [
                (.post, "/v1/admin/apps", #"{"name":"Other","platforms":["ios"]}"#),
                (.post, "/v1/admin/apps/\(appKey)/disable", nil),
                (.post, "/v1/admin/apps/\(appKey)/events", #"{"eventId":3301,"name":"login"}"#),
                (.put, "/v1/admin/apps/\(appKey)/risk/rules", #"{"rejectAt":50}"#),
                (.patch, "/v1/admin/apps/\(appKey)/settings", #"{"retentionDays":7}"#),
                (.post, "/v1/admin/apps/\(appKey)/secrets/server/rotate", #"{"overlapSeconds":0}"#),
                (.post, "/v1/admin/signing-keys/rotate", nil),
                (.put, "/v1/admin/apps/\(appKey)/risk/policy-rules/busy", #"{"when":"score > 10","then":{"decide":"review"}}"#),
                (.delete, "/v1/admin/apps/\(appKey)/risk/policy-rules/busy", nil),
                (.put, "/v1/admin/apps/\(appKey)/risk/shadow", #"{"version":1}"#),
                (.delete, "/v1/admin/apps/\(appKey)/risk/shadow", nil),
                (.post, "/v1/admin/apps/\(appKey)/risk/policy-versions/1/restore", nil),
                (.post, "/v1/admin/apps/\(appKey)/risk/replays", #"{"from":"2000-01-01T00:00:00Z","to":"2100-01-01T00:00:00Z"}"#),
                (
                    .post, "/v1/admin/apps/\(appKey)/risk/decisions/\(UUID().uuidString.lowercased())/labels",
                    #"{"label":"fraud","kind":"chargeback"}"#
                ),
            ]
            for (method, path, body) in changes {
                let refused = try await server.send(method, path, headers: viewer, body: body)
                #expect(refused.status == .forbidden && refused.problem?.code == "admin_token_read_only", "\(method) \(path)")
            }
            #expect(try await server.send(.get, "/v1/admin/audit").body == auditBefore, "nothing changed, nothing audited")
            #expect(try await server.send(.get, "/v1/admin/apps/\(appKey)", headers: viewer).json?["app"] as? [String: Any] != nil)
            // The admin's own token still changes things.
            #expect(try await server.send(.post, "/v1/admin/apps/\(appKey)/disable").status == .ok)
        }
    }

    @Test func rolesPermitWhatTheySay() throws {
        #expect(AdminRole.admin.permits(.write) && AdminRole.admin.permits(.read))
        #expect(AdminRole.viewer.permits(.read) && !AdminRole.viewer.permits(.write))
        #expect(try AdminRole(validating: "viewer") == .viewer)
        #expect(throws: DomainError.self) { try AdminRole(validating: "root") }
        #expect(throws: DomainError.self) { try AdminRole(validating: "Admin") }
    }
}
