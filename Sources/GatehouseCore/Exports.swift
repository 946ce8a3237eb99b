/// The signature scheme and its base64url are shared with the client; Core's users see them as Core's.
@_exported import GatehouseSigning
