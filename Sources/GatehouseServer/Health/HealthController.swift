// Health: liveness, readiness and metrics for the orchestrator and the load balancer.
// Serves no seed: it keeps the service that serves them observable.

import Foundation
import GatehouseAPI
import GatehouseStore
import HTTPTypes
import Hummingbird
import NIOCore
import Prometheus

/// Liveness, readiness (the database answers, in one read, and no migration is pending) and Prometheus metrics.
struct HealthController {
    typealias Context = GatehouseRequestContext
    let store: any StoreMaintenance
    let devices: any DeviceRiskStore
    let registry: PrometheusCollectorRegistry

    static var poolInUse: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "gatehouse",
            subsystem: "db_pool",
            metricName: "in_use",
            unitName: "",
            helpText: "Database operations holding a pooled connection right now."
        )
    }
    static var poolCapacity: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "gatehouse",
            subsystem: "db_pool",
            metricName: "capacity",
            unitName: "",
            helpText: "Most connections this instance's pool opens."
        )
    }

    static var batchPoolInUse: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "gatehouse",
            subsystem: "db_batch_pool",
            metricName: "in_use",
            unitName: "",
            helpText: "Group-commit batches (nonces, ztoken consumptions) holding a connection of their own pool right now."
        )
    }
    static var batchPoolCapacity: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "gatehouse",
            subsystem: "db_batch_pool",
            metricName: "capacity",
            unitName: "",
            helpText: "Most connections the group commits' pool opens to each host."
        )
    }

    static var ztokenLookups: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "gatehouse",
            subsystem: "store",
            metricName: "ztoken_lookups",
            unitName: "",
            helpText: "Risk queries that consumed (or found consumed) a ztoken since start; a forged token never does."
        )
    }

    /// The decisions of refused tokens, written behind their answers: how many were, were lost, wait.
    static func decisionsBehind(_ metricName: String, _ helpText: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "gatehouse", subsystem: "store", metricName: metricName, unitName: "", helpText: helpText)
    }
    static var decisionsWrittenBehind: MetricNameDescriptor {
        decisionsBehind(
            "decisions_written_behind",
            "Decisions of refused ztokens written after their answer, since start."
        )
    }
    static var decisionsLost: MetricNameDescriptor {
        decisionsBehind(
            "decisions_lost",
            "Decisions of refused ztokens never written (the queue was full or the database refused the batch), since start."
        )
    }
    static var decisionsPending: MetricNameDescriptor {
        decisionsBehind(
            "decisions_pending",
            "Decisions of refused ztokens answered and not yet written: what a crash now would lose."
        )
    }

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/health/live", for: .probes, use: live)
        routes.on(.get, "/health/ready", for: .probes, use: readiness)
        routes.on(.get, "/metrics", for: .probes, use: metrics)
    }

    /// On the probe listener `AdmissionHandler` gives this answer on the event loop.
    @Sendable func live(_ request: Request, context: Context) async throws -> Response {
        let (head, body) = Self.liveness()
        return Response(status: head.status, headers: head.headerFields, body: .init(byteBuffer: body))
    }

    static func liveness() -> (HTTPResponse, ByteBuffer) {
        (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), livenessBody)
    }

    private static let livenessBody = ByteBuffer(bytes: (try? JSONBody.encoder.encode(Components.Schemas.Liveness(status: .ok))) ?? Data())

    /// Readiness answers within a second: a load balancer must learn that the database is gone
    /// sooner than a request would (`GATEHOUSE_DATABASE_TIMEOUT_SECONDS`).
    static let readinessWait = Duration.seconds(1)

    @Sendable func readiness(_ request: Request, context: Context) async throws -> Response {
        do {
            let store = store
            let schema = try await BoundedWait.run(within: Self.readinessWait) { try await store.schemaStatus() }
            let pending = schema.pending
            guard pending.isEmpty else {
                throw Problem(
                    .serviceUnavailable,
                    code: "migrations_pending",
                    title: "Schema behind",
                    detail: "Migrations \(pending.map(String.init).joined(separator: ", ")) are pending; run `gatehouse migrate`."
                )
            }
            return try JSONBody.response(
                Components.Schemas.Readiness(
                    status: .ok,
                    database: store.dialect == .postgres ? .postgres : .sqlite,
                    schemaVersion: schema.applied.last ?? 0
                )
            )
        } catch let problem as Problem {
            throw problem
        } catch {
            throw Problem.databaseUnavailable()
        }
    }

    @Sendable func metrics(_ request: Request, context: Context) async throws -> Response {
        let usage = store.poolUsage
        registry.makeGauge(descriptor: Self.poolInUse).set(Double(usage.inUse))
        registry.makeGauge(descriptor: Self.poolCapacity).set(Double(usage.capacity))
        if let batches = store.batchPoolUsage {
            registry.makeGauge(descriptor: Self.batchPoolInUse).set(Double(batches.inUse))
            registry.makeGauge(descriptor: Self.batchPoolCapacity).set(Double(batches.capacity))
        }
        registry.makeGauge(descriptor: Self.ztokenLookups).set(Double(devices.ztokenLookups))
        let behind = devices.decisionsBehind
        registry.makeGauge(descriptor: Self.decisionsWrittenBehind).set(Double(behind.written))
        registry.makeGauge(descriptor: Self.decisionsLost).set(Double(behind.lost))
        registry.makeGauge(descriptor: Self.decisionsPending).set(Double(behind.pending))
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return Response(
            status: .ok,
            headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: buffer))
        )
    }
}
