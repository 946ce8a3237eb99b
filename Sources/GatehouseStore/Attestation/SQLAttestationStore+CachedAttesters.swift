import GatehouseCore

/// An app's attesters, which every gated request reads: from this instance's copy (`ReadThroughCache`).
extension SQLAttestationStore {
    public func attesters(appID: AppID) async throws(StoreError) -> [StoredAttester] {
        try await cachedAttesters.value(for: appID) { () async throws(StoreError) in
            try await self.database.query("SELECT * FROM attesters WHERE app_id = \(.uuid(appID.rawValue)) ORDER BY attest_id")
                .map(Self.attester)
        } ?? []
    }

    public func attestersInMemory(appID: AppID) -> [StoredAttester]? {
        cachedAttesters.freshValue(for: appID)
    }
}
