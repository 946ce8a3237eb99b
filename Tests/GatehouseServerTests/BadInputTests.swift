import Foundation
import GatehouseAPI
import GatehouseTestSupport
import HTTPTypes
import Testing

/// Every kind of bad input gets a documented 4xx problem, never a 500, and writes nothing.
@Suite struct BadInputTests {
    struct Case: Sendable, CustomStringConvertible {
        let description: String
        let method: HTTPRequest.Method
        let path: String
        var body: String?
        var rawBody: [UInt8]?
        var contentType = "application/json"
        let status: Int
        let code: String
    }

    static func cases(active: String, disabled: String) -> [Case] {
        [
            Case(
                description: "unknown field",
                method: .post,
                path: "/v1/admin/apps",
                body: #"{"name":"x","platforms":["ios"],"owner":"me"}"#,
                status: 400,
                code: "unknown_field"
            ),
            Case(
                description: "wrong type",
                method: .post,
                path: "/v1/admin/apps",
                body: #"{"name":5,"platforms":["ios"]}"#,
                status: 400,
                code: "invalid_body"
            ),
            Case(description: "missing field", method: .post, path: "/v1/admin/apps", body: #"{"name":"x"}"#, status: 400, code: "invalid_body"),
            Case(description: "top-level array", method: .post, path: "/v1/admin/apps", body: "[]", status: 400, code: "invalid_body"),
            Case(description: "malformed JSON", method: .post, path: "/v1/admin/apps", body: #"{"name":"#, status: 400, code: "malformed_json"),
            Case(
                description: "bad UTF-8",
                method: .post,
                path: "/v1/admin/apps",
                rawBody: Array(#"{"name":""#.utf8) + [0xFF, 0xFE] + Array(#"","platforms":["ios"]}"#.utf8),
                status: 400,
                code: "malformed_json"
            ),
            Case(
                description: "oversize body",
                method: .post,
                path: "/v1/admin/apps",
                body: #"{"name":""# + String(repeating: "x", count: 5000) + #"","platforms":["ios"]}"#,
                status: 413,
                code: "body_too_large"
            ),
            Case(
                description: "not JSON",
                method: .post,
                path: "/v1/admin/apps",
                body: "name=x",
                contentType: "text/plain",
                status: 415,
                code: "unsupported_media_type"
            ),
            Case(
                description: "unknown platform",
                method: .post,
                path: "/v1/admin/apps",
                body: #"{"name":"x","platforms":["symbian"]}"#,
                status: 400,
                code: "invalid_body"
            ),
            Case(
                description: "platform twice",
                method: .post,
                path: "/v1/admin/apps",
                body: #"{"name":"x","platforms":["ios","ios"]}"#,
                status: 400,
                code: "invalid_platforms"
            ),
            Case(
                description: "blank name",
                method: .post,
                path: "/v1/admin/apps",
                body: #"{"name":"  ","platforms":["ios"]}"#,
                status: 400,
                code: "invalid_app_name"
            ),
            Case(description: "unknown app", method: .get, path: "/v1/admin/apps/zzzzz", status: 404, code: "app_not_found"),
            Case(description: "malformed appKey", method: .get, path: "/v1/admin/apps/NOPE", status: 400, code: "invalid_app_key"),
            Case(
                description: "event 3299",
                method: .post,
                path: "/v1/admin/apps/\(active)/events",
                body: #"{"eventId":3299,"name":"x"}"#,
                status: 400,
                code: "invalid_event_id"
            ),
            Case(
                description: "event 3401",
                method: .post,
                path: "/v1/admin/apps/\(active)/events",
                body: #"{"eventId":3401,"name":"x"}"#,
                status: 400,
                code: "invalid_event_id"
            ),
            Case(
                description: "event id as text",
                method: .post,
                path: "/v1/admin/apps/\(active)/events",
                body: #"{"eventId":"3300","name":"x"}"#,
                status: 400,
                code: "invalid_body"
            ),
            Case(
                description: "event id fraction",
                method: .post,
                path: "/v1/admin/apps/\(active)/events",
                body: #"{"eventId":3300.5,"name":"x"}"#,
                status: 400,
                code: "invalid_body"
            ),
            Case(
                description: "event name too long",
                method: .post,
                path: "/v1/admin/apps/\(active)/events",
                body: #"{"eventId":3310,"name":""# + String(repeating: "n", count: 101) + #""}"#,
                status: 400,
                code: "invalid_event_name"
            ),
            Case(
                description: "duplicate event",
                method: .post,
                path: "/v1/admin/apps/\(active)/events",
                body: #"{"eventId":3300,"name":"again"}"#,
                status: 409,
                code: "event_already_registered"
            ),
            Case(
                description: "event for unknown app",
                method: .post,
                path: "/v1/admin/apps/zzzzz/events",
                body: #"{"eventId":3300,"name":"x"}"#,
                status: 404,
                code: "app_not_found"
            ),
            Case(
                description: "event for disabled app",
                method: .post,
                path: "/v1/admin/apps/\(disabled)/events",
                body: #"{"eventId":3300,"name":"x"}"#,
                status: 409,
                code: "app_disabled"
            ),
            Case(
                description: "rotate for disabled app",
                method: .post,
                path: "/v1/admin/apps/\(disabled)/secrets/sdk/rotate",
                status: 409,
                code: "app_disabled"
            ),
            Case(
                description: "rotate unknown kind",
                method: .post,
                path: "/v1/admin/apps/\(active)/secrets/master/rotate",
                status: 400,
                code: "invalid_secret_kind"
            ),
            Case(
                description: "negative overlap",
                method: .post,
                path: "/v1/admin/apps/\(active)/secrets/sdk/rotate",
                body: #"{"overlapSeconds":-1}"#,
                status: 400,
                code: "invalid_overlap"
            ),
            Case(
                description: "explicit null",
                method: .post,
                path: "/v1/admin/apps/\(active)/secrets/sdk/rotate",
                body: #"{"overlapSeconds":null}"#,
                status: 400,
                code: "invalid_body"
            ),
            Case(description: "limit 0", method: .get, path: "/v1/admin/apps?limit=0", status: 400, code: "invalid_page_size"),
            Case(description: "limit not a number", method: .get, path: "/v1/admin/apps?limit=ten", status: 400, code: "invalid_parameter"),
            Case(description: "cursor 0", method: .get, path: "/v1/admin/audit?before=0", status: 400, code: "invalid_parameter"),
            Case(
                description: "audit action with capitals",
                method: .get,
                path: "/v1/admin/audit?action=App.Create",
                status: 400,
                code: "invalid_parameter"
            ),
            Case(description: "audit actor of no kind", method: .get, path: "/v1/admin/audit?actor=ops", status: 400, code: "invalid_parameter"),
            Case(
                description: "audit actor with a NUL",
                method: .get,
                path: "/v1/admin/audit?actor=cli:a%00b",
                status: 400,
                code: "invalid_parameter"
            ),
            Case(description: "audit actor of no name", method: .get, path: "/v1/admin/audit?actor=cli:", status: 400, code: "invalid_parameter"),
            Case(description: "audit from not a time", method: .get, path: "/v1/admin/audit?from=yesterday", status: 400, code: "invalid_parameter"),
            Case(description: "audit of an unknown app", method: .get, path: "/v1/admin/audit?appKey=zzzzz", status: 404, code: "app_not_found"),
            Case(description: "method not allowed", method: .put, path: "/v1/admin/apps", status: 405, code: "method_not_allowed"),
            Case(description: "no such route", method: .get, path: "/v1/admin/nothing-here", status: 404, code: "route_not_found"),
        ]
    }

    @Test(arguments: TestStoreKind.available)
    func badInputGetsADocumentedProblemAndWritesNothing(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let active = try await server.send(.post, "/v1/admin/apps", body: #"{"name":"Active","platforms":["ios"]}"#)
            let disabled = try await server.send(.post, "/v1/admin/apps", body: #"{"name":"Disabled","platforms":["android"]}"#)
            let activeKey = try active.decoded(Components.Schemas.AppCreated.self).app.appKey
            let disabledKey = try disabled.decoded(Components.Schemas.AppCreated.self).app.appKey
            _ = try await server.send(.post, "/v1/admin/apps/\(disabledKey)/disable")
            let registered = try await server.send(.post, "/v1/admin/apps/\(activeKey)/events", body: #"{"eventId":3300,"name":"login"}"#)
            #expect(registered.status == .created)
            let auditBefore = try await server.send(.get, "/v1/admin/audit?limit=200")
            let appBefore = try await server.send(.get, "/v1/admin/apps/\(activeKey)")

            for testCase in Self.cases(active: activeKey, disabled: disabledKey) {
                var headers = server.admin
                headers[.contentType] = testCase.contentType
                let response = try await server.send(testCase.method, testCase.path, headers: headers, body: testCase.body, rawBody: testCase.rawBody)
                #expect(Int(response.status.code) == testCase.status, "\(testCase)")
                #expect(response.problem?.code == testCase.code, "\(testCase)")
                #expect(response.problem?._type == "urn:gatehouse:problem:\(testCase.code)", "\(testCase)")
                #expect(response.headers[.contentType] == "application/problem+json", "\(testCase)")
                if testCase.status == 405 { #expect(response.headers[.allow] == "POST, GET") }
            }

            let auditAfter = try await server.send(.get, "/v1/admin/audit?limit=200")
            let appAfter = try await server.send(.get, "/v1/admin/apps/\(activeKey)")
            let auditCount = { (page: TestResponse) in page.read(Components.Schemas.AuditPage.self)?.items.count }
            #expect(auditCount(auditAfter) == auditCount(auditBefore))
            #expect(NSDictionary(dictionary: appAfter.json ?? [:]).isEqual(to: appBefore.json ?? [:]))
            let apps = try await server.send(.get, "/v1/admin/apps")
            #expect(apps.read(Components.Schemas.AppPage.self)?.items.count == 2)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func backendCredentialRefusalsDoNotRevealWhichPartWasWrong(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let created = try await server.send(.post, "/v1/admin/apps", body: #"{"name":"Shop","platforms":["ios"]}"#)
            let appKey = try created.decoded(Components.Schemas.AppCreated.self).app.appKey
            let cases: [(String?, String)] = [
                (nil, "backend_credentials_missing"),
                ("Basic !!!", "backend_credentials_malformed"),
                ("Basic " + Data("\(appKey):gsk_wrong".utf8).base64EncodedString(), "backend_credentials_invalid"),
                ("Basic " + Data("zzzzz:gsk_wrong".utf8).base64EncodedString(), "backend_credentials_invalid"),
            ]
            for (authorization, code) in cases {
                var headers: HTTPFields = [:]
                if let authorization { headers[.authorization] = authorization }
                let response = try await server.send(.get, "/v1/backend/whoami", headers: headers)
                #expect(response.status == .unauthorized)
                #expect(response.problem?.code == code)
                #expect(response.headers[.wwwAuthenticate] == #"Basic realm="gatehouse-backend""#)
            }
        }
    }
}
