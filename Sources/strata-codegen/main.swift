// strata-codegen: the tool the StrataCodegen build plugin runs: one model in, one Swift file out.
//
//     strata-codegen MODEL OUTPUT.swift
//
// Owns: the command line and the exit status. The model reader's warnings are printed as compiler
// warnings; a model that cannot be read or generated prints a
// compiler-style diagnostic naming the model file and line, removes OUTPUT (a build must not
// compile the code of an older model beside the error), and exits 1. Never writes beside the
// model: OUTPUT is in the plugin's work directory.

import Foundation
import StrataCodeGeneration

let usage = "usage: strata-codegen MODEL(.xcdatamodeld|.xcdatamodel) OUTPUT.swift"
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("--help") || arguments.contains("-h") {
    print(usage)
    exit(0)
}
guard arguments.count == 2, !arguments.contains(where: { $0.hasPrefix("-") }) else {
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    exit(2)
}
let modelURL = URL(fileURLWithPath: arguments[0])
let outputURL = URL(fileURLWithPath: arguments[1])
do {
    let generator = try ModelCodeGenerator(contentsOf: modelURL)
    let file = try generator.files(layout: .oneFile)[0]
    try GeneratedFiles.write(file.contents, to: outputURL)
    // What the reader converted or dropped (a default it read leniently, an element it skips).
    for warning in generator.model.warnings {
        FileHandle.standardError.write(Data((GeneratedFiles.diagnostic(warning, severity: "warning", fallbackPath: modelURL.path) + "\n").utf8))
    }
} catch {
    try? FileManager.default.removeItem(at: outputURL)
    FileHandle.standardError.write(Data((GeneratedFiles.diagnostic(for: error, fallbackPath: modelURL.path) + "\n").utf8))
    exit(1)
}
