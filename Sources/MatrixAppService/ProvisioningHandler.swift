import FoundationEssentials
import Matrix

/// What serves the provisioning API's routes once ``AppServiceListener`` has checked their token and body size.
/// Implemented by the bridge core (and by fakes in tests); called from the listener's tasks, concurrently.
public protocol ProvisioningHandler: Sendable {
    /// Answers one authenticated provisioning request (`body`: at most 64 KiB, possibly empty).
    func provision(_ route: ProvisioningRoute, body: Data) async -> HTTPServerResponse
}
