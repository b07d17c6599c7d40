import ArgumentParser

/// `--ca-file`, shared by the commands that talk to a server over wss:// or https://.
struct CAFileOption: ParsableArguments {
    @Option(name: .customLong("ca-file"), help: ArgumentHelp(
        "PEM certificates to trust for wss:// and https:// instead of the system store (a self-signed server's certificate). Server certificates are always verified, host name included.",
        valueName: "file"))
    var caFile: String?
}
