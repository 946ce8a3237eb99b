import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTestSupport
import HTTPTypes
import Testing

/// Operators' STS roles over loopback HTTP on both stores: create, read, change, the key pair never
/// returned nor audited, and every kind of bad setting refused with its field.
@Suite struct STSRoleFlowTests {
    typealias Flow = DeviceRiskFlowTests

    static let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    static let policy =
        #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject","s3:PutObject"],"Resource":"arn:aws:s3:::photos/users/${accountId}/*"}]}"#

    static func json(_ text: String) -> String {
        let data = try! JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }

    static func roleBody(_ roleID: String, extra: String = "") -> String {
        #"{"roleId":"\#(roleID)","provider":"aws","stsEndpoint":"http://127.0.0.1:5000","region":"us-east-1","#
            + #""roleArn":"arn:aws:iam::123456789012:role/uploads","attestId":"login-pow","accessKeyId":"AKIAEXAMPLE","#
            + #""accessKeySecret":"\#(secret)","policyTemplate":\#(json(policy))\#(extra)}"#
    }

    @Test(arguments: TestStoreKind.available)
    func operatorsManageRolesWithoutEverSeeingTheKey(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let base = "/v1/admin/apps/\(app.appKey)/roles"
            let created = try await server.send(
                .post,
                base,
                body: Self.roleBody("uploads", extra: #","durationSeconds":1800,"maxDurationSeconds":7200"#)
            )
            #expect(created.status == .created, "\(created.json ?? [:])")
            let role = try created.decoded(Components.Schemas.Role.self)
            #expect(role.durationSeconds == 1800 && role.addressing == .path)
            #expect(created.json?["accessKeyId"] == nil && created.json?["accessKeySecret"] == nil)
            #expect(try await server.send(.post, base, body: Self.roleBody("uploads")).status == .conflict)

            let changed = try await server.send(.patch, "\(base)/uploads", body: #"{"durationSeconds":3600,"status":"disabled"}"#)
            #expect(changed.status == .ok && changed.read(Components.Schemas.Role.self)?.status == .disabled)
            let rekeyed = try await server.send(.patch, "\(base)/uploads", body: #"{"accessKeyId":"AKIANEW","accessKeySecret":"another-secret-1"}"#)
            #expect(rekeyed.status == .ok)
            let listed = try await server.send(.get, base)
            #expect(listed.read(Components.Schemas.RoleList.self)?.items.map(\.roleId) == ["uploads"])
            #expect(try await server.send(.get, "\(base)/nope").status == .notFound)

            // The audit log records each change, and never the key pair.
            let audit = try await server.send(.get, "/v1/admin/audit?appKey=\(app.appKey)")
            let text = String(
                decoding: try JSONSerialization.data(withJSONObject: audit.json ?? [:], options: [.withoutEscapingSlashes]),
                as: UTF8.self
            )
            #expect(text.contains("role.create") && text.contains("role.update") && text.contains("replaced"))
            #expect(!text.contains(Self.secret) && !text.contains("another-secret-1") && !text.contains("AKIANEW"))
        }
    }

    @Test(arguments: TestStoreKind.available)
    func badRoleSettingsAreRefusedByField(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let base = "/v1/admin/apps/\(app.appKey)/roles"
            let cases: [(String, String)] = [
                (#","durationSeconds":899"#, "durationSeconds"),
                (#","durationSeconds":7200"#, "durationSeconds"),
                (#","maxDurationSeconds":50000"#, "maxDurationSeconds"),
                (#","externalId":"x""#, "externalId"),
                (#","storageEndpoint":"https://s3.example.com/photos""#, "storageEndpoint"),
                (#","selfSigned":true"#, "selfSigned"),
            ]
            for (extra, field) in cases {
                let refused = try await server.send(.post, base, body: Self.roleBody("bad-role", extra: extra))
                #expect(refused.status == .badRequest && refused.problem?.field == field, "\(extra): \(refused.json ?? [:])")
            }
            let replaced: [(String, String, String)] = [
                (#""provider":"aws""#, #""provider":"alibaba""#, "roleArn"),
                (#""stsEndpoint":"http://127.0.0.1:5000""#, #""stsEndpoint":"ftp://sts.example.com""#, "stsEndpoint"),
            ]
            for (old, new, field) in replaced {
                let refused = try await server.send(.post, base, body: Self.roleBody("bad-role").replacingOccurrences(of: old, with: new))
                #expect(refused.status == .badRequest && refused.problem?.field == field, "\(new): \(refused.json ?? [:])")
            }
            let badPolicies = [
                #"{"Statement":[]}"#, #"{"Version":"1","Statement":[{"Effect":"Maybe","Action":"*","Resource":"*"}]}"#, "not json",
                #"{"Version":"1","Statement":[{"Effect":"Allow","Action":"*","Resource":"${bucket}"}]}"#,
            ]
            for template in badPolicies {
                let body = Self.roleBody("bad-role").replacingOccurrences(of: Self.json(Self.policy), with: Self.json(template))
                let refused = try await server.send(.post, base, body: body)
                #expect(refused.status == .badRequest && refused.problem?.code == "invalid_policy_template", "\(template)")
            }
            let keyless = Self.roleBody("bad-role").replacingOccurrences(of: #""accessKeySecret":"\#(Self.secret)","#, with: "")
            let refused = try await server.send(.post, base, body: keyless)
            #expect(refused.status == .badRequest && refused.problem?.field == "accessKeyId")
            // Nothing was half-written.
            #expect(try await server.send(.get, base).read(Components.Schemas.RoleList.self)?.items.isEmpty == true)
        }
    }
}
