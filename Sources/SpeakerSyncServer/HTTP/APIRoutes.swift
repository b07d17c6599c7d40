import Logging

extension RouteTable {
    /// Every route the server answers. Each capability declares its own routes, with their handlers,
    /// in its file: a new route goes there; a new capability adds its line here.
    static func api(services: APIServices, gate: AccessGate, metrics: ServerMetrics, logger: Logger) -> RouteTable {
        var table = RouteTable()
        ConsoleAssets.register(in: &table)
        APIDescriptions.register(in: &table)
        StatusRoutes.register(in: &table, services: services, gate: gate, metrics: metrics)
        ConversationRoutes.register(in: &table, services: services, logger: logger)
        CompareRoutes.register(in: &table, services: services)
        AudioRoute.register(in: &table, services: services)
        DiarizationJobRoutes.register(in: &table, services: services)
        PeopleRoutes.register(in: &table, services: services, logger: logger)
        TokenRoutes.register(in: &table, services: services, logger: logger)
        DeviceRoutes.register(in: &table, services: services)
        SessionRoutes.register(in: &table, services: services)
        TestRecordingRoutes.register(in: &table, services: services)
        return table
    }
}
