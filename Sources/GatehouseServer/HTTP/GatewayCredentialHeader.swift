import GatehouseOperations
import HTTPTypes

enum GatewayCredential {
    /// `GATEHOUSE_GATE_CREDENTIAL_HEADER` as a header name, or the reason it cannot be one.
    static func header(named name: String) throws -> HTTPField.Name {
        guard GateCredentialHeader.isAcceptable(name), let header = HTTPField.Name(name) else {
            throw ConfigurationError("the gate's credential header '\(name)' cannot be used")
        }
        return header
    }
}
