import ArgumentParser
import Foundation
import SpeakerSyncServer

/// Options shared by commands that run a server (serve, demo).
struct ServerOptions: ParsableArguments {
    @Option(help: "Address to listen on (0.0.0.0 for every interface).")
    var host: String = "127.0.0.1"

    @Option(help: "Port for WebSocket and HTTP (0 picks a free one).")
    var port: Int = 8080

    @Option(name: .customLong("database-url"), help: "PostgreSQL URL; without it (and without DATABASE_URL) the server runs a private cluster under --data-dir.")
    var databaseURL: String?

    @Option(name: .customLong("data-dir"), help: "Folder for the embedded PostgreSQL cluster.")
    var dataDirectory: String?

    @Option(name: .customLong("plugins"), help: "Folder of provider plugins (*.so). Default: SPEAKERSYNC_PLUGINS, else beside the executable.")
    var pluginsDirectory: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    func makeConfig() -> ServerConfig {
        var config = ServerConfig.default
        config.host = host
        config.port = port
        config.databaseURL = databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
        if let dataDirectory { config.dataDirectory = dataDirectory }
        if let pluginsDirectory { config.pluginsDirectory = pluginsDirectory }
        return config
    }
}
