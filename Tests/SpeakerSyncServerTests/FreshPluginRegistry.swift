import Foundation
import Logging
import PluginHost
import TestSupport

extension TestPlugins {
    /// A registry on a copy of a built plugin made for it alone: a process loads each plugin file once
    /// and it keeps the configuration of that first load (LoadedPlugin.shared), so a test that gives a
    /// plugin its own provider configuration loads its own copy. The copy's file is removed once loaded
    /// (the mapping stays).
    static func freshRegistry(_ name: String, configuration: ProviderConfiguration, logger: Logger = Logger(label: "test")) throws -> PluginRegistry {
        let folder = try TestPlugins.folder(copying: [name], faulty: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        return PluginRegistry(libraryPaths: [folder.appendingPathComponent("lib\(name).so").path], configuration: configuration, logger: logger)
    }
}
