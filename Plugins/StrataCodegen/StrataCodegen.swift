// StrataCodegen: the build-tool plugin that turns a target's Xcode models into Swift classes.
//
// Owns: finding the `.xcdatamodeld` and `.xcdatamodel` folders of a target and declaring one build
// command per model: strata-codegen reads the model and writes `<Model>+Strata.swift` into the
// plugin's work directory, which the target then compiles. Every file inside the model folder is
// an input, so the command runs again exactly when one of them changes. Never writes into the
// package's source tree.

import Foundation
import PackagePlugin

@main
struct StrataCodegen: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let tool = try context.tool(named: "strata-codegen")
        let found = models(in: target)
        var used: [String: Int] = [:]
        return found.map { model in
            // Models of one name in different folders get files of their own.
            var name = model.deletingPathExtension().lastPathComponent
            used[name, default: 0] += 1
            if used[name]! > 1 { name += "-\(used[name]!)" }
            let output = context.pluginWorkDirectoryURL.appending(path: "\(name)+Strata.swift")
            return .buildCommand(
                displayName: "Generating managed object classes from \(model.lastPathComponent)",
                executable: tool.url,
                arguments: [model.path, output.path],
                inputFiles: files(under: model),
                outputFiles: [output]
            )
        }
    }

    /// The target's model folders: each `.xcdatamodeld`, and each `.xcdatamodel` not inside one.
    private func models(in target: SourceModuleTarget) -> [URL] {
        var found: [URL] = []
        for file in target.sourceFiles {
            let url = file.url
            if url.pathExtension == "xcdatamodeld" {
                found.append(url)
            } else if url.pathExtension == "xcdatamodel", url.deletingLastPathComponent().pathExtension != "xcdatamodeld" {
                found.append(url)
            } else if file.type == .resource, isDirectory(url) {
                // A resource folder copied whole (`.copy("Models")`) may hold models too.
                found += nestedModels(in: url)
            }
        }
        return found.sorted { $0.path < $1.path }
    }

    private func nestedModels(in directory: URL) -> [URL] {
        guard let entries = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else { return [] }
        var found: [URL] = []
        for case let url as URL in entries {
            if url.pathExtension == "xcdatamodeld" {
                found.append(url)
                entries.skipDescendants()
            } else if url.pathExtension == "xcdatamodel" {
                found.append(url)
                entries.skipDescendants()
            }
        }
        return found
    }

    /// Every regular file under `directory` (the model's versions and `.xccurrentversion`).
    private func files(under directory: URL) -> [URL] {
        guard let entries = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else { return [directory] }
        var found: [URL] = []
        for case let url as URL in entries where !isDirectory(url) { found.append(url) }
        return found.sorted { $0.path < $1.path }
    }

    private func isDirectory(_ url: URL) -> Bool {
        var flag: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &flag) && flag.boolValue
    }
}
