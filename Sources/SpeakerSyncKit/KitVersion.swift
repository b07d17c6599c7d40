/// This library's version, semver: the major changes when an app's code that compiled against the
/// last release may no longer compile or behave the same; the minor with additions; the patch with
/// fixes. A release is the commit tagged `kit-<version>` (docs/client.md, "Versions"), and this
/// constant names it, so an app can log which kit it runs. The wire protocol has its own number
/// (`SessionInfo.protocolVersion`), which the server reports in its `session` message.
public enum SpeakerSyncKitVersion {
    public static let current = "0.1.0"
}
