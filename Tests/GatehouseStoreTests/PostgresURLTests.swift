import Testing

@testable import GatehouseStore

/// The database URL as libpq reads it, several hosts included, and what a log may show of it.
@Suite struct PostgresURLTests {
    @Test func oneHostWithEverything() throws {
        let url = try PostgresURL("postgres://gate%40house:p%3Ass@db.internal:6432/gate?sslmode=require")
        #expect(url.user == "gate@house")
        #expect(url.password == "p:ss")
        #expect(url.hosts == [.init(name: "db.internal", port: 6432)])
        #expect(url.database == "gate")
        #expect(url.sslmode == "require")
        #expect(url.sessionAttributes == .any)
        #expect(!url.redacted.contains("p:ss") && !url.redacted.contains("p%3Ass"))
    }

    @Test func severalHostsAsLibpqReadsThem() throws {
        let url = try PostgresURL(
            "postgresql://gatehouse@127.0.0.1:6001,127.0.0.1:6002,[::1]:6003,db/gatehouse?target_session_attrs=read-write&sslmode=disable"
        )
        #expect(
            url.hosts == [
                .init(name: "127.0.0.1", port: 6001), .init(name: "127.0.0.1", port: 6002), .init(name: "::1", port: 6003),
                .init(name: "db", port: 5432),
            ]
        )
        #expect(url.password == nil)
        #expect(url.sessionAttributes == .readWrite)
        #expect(
            url.redacted
                == "postgres://gatehouse@127.0.0.1:6001,127.0.0.1:6002,[::1]:6003,db:5432/gatehouse?sslmode=disable&target_session_attrs=read-write"
        )
    }

    @Test(arguments: [
        "mysql://u@h/db", "postgres://h:5432/db", "postgres://:pw@h/db", "postgres://u@h:99999/db", "postgres://u@h:abc/db",
        "postgres://u@[::1/db", "postgres://u@h/db?sslmode=verify-full", "postgres://u@h1,h2/db?target_session_attrs=standby",
        "postgres://u:%zz@h/db",
    ])
    func refusesWhatItCannotServeAndNeverEchoesThePassword(text: String) {
        #expect(throws: StoreError.self) { try PostgresURL(text) }
        #expect(StoreLocation.postgres(url: "postgres://u:secret-pw@h1,h2/db").description.contains("secret-pw") == false)
    }
}
