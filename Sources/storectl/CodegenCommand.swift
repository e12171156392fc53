// CodegenCommand: `storectl codegen MODEL [--output DIR] [--all] [--one-file] [--access LEVEL]`:
// the StrataCodegen build plugin's output, by hand, for people who check generated code in.
//
// Owns: the command line only; the code is ModelCodeGenerator's, the same the plugin runs, and
// files are written whole (GeneratedFiles). Without --output the sources go to standard output.
// Never writes beside the model unless told to.

import Foundation
import StrataCodeGeneration

enum CodegenCommand: Command {
    static let name = "codegen"
    static let summary = "Swift classes for an Xcode model's entities, as the StrataCodegen plugin generates them (--all: every entity, whatever its code generation setting; --one-file: one file, as the plugin writes)"
    static let usage = "codegen MODEL [--output DIR] [--all] [--one-file] [--access internal|package|public]"

    static func run(_ arguments: Arguments) throws -> Int32 {
        var arguments = arguments
        let output = arguments.value("--output")
        let all = arguments.flag("--all")
        let oneFile = arguments.flag("--one-file")
        let access = arguments.value("--access") ?? "internal"
        guard ["public", "internal", "package"].contains(access) else {
            throw ArgumentError(message: "--access takes public, internal or package, not \(access)")
        }
        let model = try arguments.path()
        let generator = try ModelCodeGenerator(contentsOf: URL(fileURLWithPath: model),
                                               selection: all ? .allEntities : .modelSettings, access: access)
        let files = try generator.files(layout: oneFile ? .oneFile : .filePerEntity)
        guard let output else {
            for (index, file) in files.enumerated() {
                if index > 0 { print("") }
                print("// ---- \(file.name)")
                print(file.contents, terminator: "")
            }
            return 0
        }
        try GeneratedFiles.write(files, into: URL(fileURLWithPath: output))
        for file in files { print(URL(fileURLWithPath: output).appendingPathComponent(file.name).path) }
        return 0
    }
}
