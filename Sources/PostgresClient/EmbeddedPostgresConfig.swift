import Foundation

/// Settings of a private PostgreSQL cluster.
public struct EmbeddedPostgresConfig: Sendable {
    /// Database created on first start, owned by `applicationRole`, and named in the returned
    /// connection string.
    public var databaseName: String
    /// Superuser created by initdb. It has no password: only the owner's operating-system user
    /// reaches it, through `peer` authentication on the private socket (`ClusterAuthentication`).
    public var superuser: String
    /// The role the returned connection string names: LOGIN, not a superuser, no CREATEDB or
    /// CREATEROLE; it owns `databaseName` and everything in it, and signs in with SCRAM-SHA-256
    /// and the password in `<data folder>.pgpass`.
    public var applicationRole: String
    /// Port number; with `listen_addresses = ''` it only names the socket file.
    public var port: Int
    /// Folder with initdb/postgres; `nil` finds it via `pg_config --bindir` or /usr/lib/postgresql/*/bin.
    public var binDirectory: URL?
    /// Account that runs the server when this process is root (PostgreSQL refuses root): a
    /// dedicated system user, created at start when missing (`ClusterAccount`).
    public var unprivilegedUser: String
    /// Its group; nil: the user's primary group.
    public var unprivilegedGroup: String?
    /// Seconds the server has to accept connections after it is started (and a client to reach it).
    public var startTimeoutSeconds: Int
    /// PostgreSQL's `max_connections` (each SpeakerSync server holds a few: writer, readers, lease).
    public var maxConnections: Int
    /// Seconds a fast shutdown (SIGINT) may take before the server is told to stop at once (SIGQUIT).
    public var stopTimeoutSeconds: Int

    public init(databaseName: String = "speakersync", superuser: String = "postgres",
                applicationRole: String = "speakersync_app", port: Int = 5432,
                binDirectory: URL? = nil, unprivilegedUser: String = "speakersync-pg",
                unprivilegedGroup: String? = nil, startTimeoutSeconds: Int = 60, maxConnections: Int = 100,
                stopTimeoutSeconds: Int = 60) {
        self.maxConnections = maxConnections
        self.databaseName = databaseName
        self.superuser = superuser
        self.applicationRole = applicationRole
        self.port = port
        self.binDirectory = binDirectory
        self.unprivilegedUser = unprivilegedUser
        self.unprivilegedGroup = unprivilegedGroup
        self.startTimeoutSeconds = startTimeoutSeconds
        self.stopTimeoutSeconds = stopTimeoutSeconds
    }

    public static let `default` = EmbeddedPostgresConfig()
}
