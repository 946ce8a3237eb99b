import Foundation
import GatehouseCore
import GatehouseTestSupport
import Synchronization
import Testing

@testable import GatehouseStore

/// The instance's copies of apps and attesters: a change through this instance shows at once, one
/// through another instance once the copy has aged out, and a read racing a change keeps nothing.
@Suite struct ReadThroughCacheTests {
    let box = try! SecretBox(masterKey: Array(repeating: 9, count: 32))
    let origin = ChangeOrigin(actor: Actor(kind: .cli, name: "test"), requestID: nil, sourceAddress: nil)
    let now = Date(millisecondsSince1970: 1_800_000_000_000)

    @Test(arguments: TestStoreKind.available)
    func changesShowAtOnceHereAndWithinTheLifetimeElsewhere(kind: TestStoreKind) async throws {
        var generator = SystemRandomNumberGenerator()
        let app = try AppDraft(name: "Shop", platforms: ["ios"]).makeApp(at: now, using: &generator)
        let secrets = issueInitialSecrets(for: app, at: now, box: box, using: &generator).values.map(\.stored)
        let audit = origin.entry(at: now, action: "app.create", targetType: "app", targetID: "x", appID: app.id, before: nil, after: nil)
        try await withMigratedStore(kind) { (here, database) async throws in
            try await StoreService.withStore(database.location, logger: TestDatabase.logger) { elsewhere in
                #expect(try await elsewhere.apps.appWithSecrets(withKey: app.appKey) == nil, "an app not there yet is not remembered as missing")
                try await here.apps.createApp(app, secrets: secrets, audit: audit)
                // The copy is stamped when its read starts, never before this.
                let copiedAt = ContinuousClock.now
                #expect(try await elsewhere.apps.appWithSecrets(withKey: app.appKey)?.app.status == .active)
                #expect(try await here.apps.appWithSecrets(withKey: app.appKey)?.secrets.count == secrets.count)

                var disabled = app
                disabled.status = .disabled
                try await here.apps.changeStatus(of: app, from: .active, to: disabled, audit: audit)
                #expect(try await here.apps.appWithSecrets(withKey: app.appKey)?.app.status == .disabled)
                // Judged only if the copy was surely alive when this read began (it began before the read
                // returned): on a machine busy with every other suite, the writes above may themselves
                // take longer than the copy's lifetime.
                let copy = try await elsewhere.apps.appWithSecrets(withKey: app.appKey)?.app.status
                if ContinuousClock.now - copiedAt < SQLStore.cacheLifetime {
                    #expect(copy == .active, "still its copy")
                }
                try await Task.sleep(for: SQLStore.cacheLifetime + .milliseconds(200))
                #expect(try await elsewhere.apps.appWithSecrets(withKey: app.appKey)?.app.status == .disabled)
            }
        }
    }

    @Test func aLoadThatRacedAChangeIsNotKept() async throws {
        let cache = ReadThroughCache<String, Int>(lifetime: .seconds(60))
        let (started, starting) = AsyncStream<Void>.makeStream()
        let (release, releasing) = AsyncStream<Void>.makeStream()
        let racing = Task {
            try await cache.value(for: "app") { () async throws(StoreError) in
                starting.yield()
                for await _ in release { break }
                return 1
            }
        }
        for await _ in started { break }
        cache.empty()
        releasing.yield()
        #expect(try await racing.value == 1)
        #expect(try await cache.value(for: "app") { () async throws(StoreError) in 2 } == 2, "read again, not the raced copy")
        #expect(try await cache.value(for: "app") { () async throws(StoreError) in 3 } == 2, "the fresh copy is kept")
    }

    @Test func copiesAgeOut() async throws {
        let cache = ReadThroughCache<String, Int>(lifetime: .milliseconds(500))
        let started = ContinuousClock.now
        #expect(try await cache.value(for: "app") { () async throws(StoreError) in 1 } == 1)
        let second = try await cache.value(for: "app") { () async throws(StoreError) in 2 }
        // Only while the copy is surely alive: a machine busy with every other suite may take longer.
        if ContinuousClock.now - started < .milliseconds(400) { #expect(second == 1) }
        try await Task.sleep(for: .milliseconds(600))
        #expect(try await cache.value(for: "app") { () async throws(StoreError) in 3 } == 3)
    }

    @Test func requestsThatMissTogetherShareOneLoad() async throws {
        let cache = ReadThroughCache<String, Int>(lifetime: .seconds(60))
        final class Count: Sendable { let value = Atomic<Int>(0) }
        let loads = Count()
        let (release, releasing) = AsyncStream<Void>.makeStream()
        let values = try await withThrowingTaskGroup(of: Int?.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    try await cache.value(for: "app") { () async throws(StoreError) in
                        loads.value.wrappingAdd(1, ordering: .relaxed)
                        for await _ in release { break }
                        return 7
                    }
                }
            }
            // Every request has asked (or will find the copy) before the one load may finish.
            try await Task.sleep(for: .milliseconds(200))
            releasing.yield()
            releasing.finish()
            return try await group.reduce(into: [Int?]()) { $0.append($1) }
        }
        #expect(values.count == 200 && values.allSatisfy { $0 == 7 })
        #expect(loads.value.load(ordering: .relaxed) == 1)
    }

    @Test func aFailedLoadIsRetriedByTheNextRequest() async throws {
        let cache = ReadThroughCache<String, Int>(lifetime: .seconds(60))
        await #expect(throws: StoreError.unavailable("down")) {
            try await cache.value(for: "app") { () async throws(StoreError) in throw .unavailable("down") }
        }
        #expect(try await cache.value(for: "app") { () async throws(StoreError) in 4 } == 4)
    }
}
