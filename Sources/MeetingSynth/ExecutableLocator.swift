import Foundation

/// Finds the synthesiser programs the way a shell would, so a missing Debian package is named in the error.
enum ExecutableLocator {
    static func resolve(_ executable: String, notFound: SynthError.Code, package: String) throws -> URL {
        let fm = FileManager.default
        if executable.contains("/") {
            guard fm.isExecutableFile(atPath: executable) else {
                throw SynthError(notFound, "\(executable) is not executable")
            }
            return URL(fileURLWithPath: executable)
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(executable)"
            if fm.isExecutableFile(atPath: candidate) { return URL(fileURLWithPath: candidate) }
        }
        throw SynthError(notFound, "\(executable) not found in PATH (apt-get install \(package))")
    }
}
