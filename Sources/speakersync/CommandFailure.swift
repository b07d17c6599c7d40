/// A command that ran but failed (server error, bad response): printed as `Error: …`, exit code 1,
/// without the usage text that ArgumentParser adds to validation errors.
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
