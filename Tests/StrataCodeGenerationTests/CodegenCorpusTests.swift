// CodegenCorpusTests: the generator over a corpus of real Xcode models (STRATA_XCODE_MODELS, a
// folder of `.xcdatamodel`/`.xcdatamodeld` collected from public repositories; skipped without
// it). Every entity of every model gets its whole class (`--all`), each model's file goes into
// its own module of a package built in .build/codegen-corpus, which must compile; its checker then
// reads each model with the generated classes (the binding checks every property) and builds a
// second model from the classes alone, which must have the file's entities, properties, types,
// relationship shapes and destinations. A model the generator refuses must be refused for a name
// Swift cannot declare, with the entity named.

import Foundation
import XCTest
import _StrataTestSupport
@testable import StrataCodeGeneration

final class CodegenCorpusTests: XCTestCase {
    private static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private func models(in folder: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { ["xcdatamodel", "xcdatamodeld"].contains($0.pathExtension) }
            .sorted { $0.path < $1.path }
    }

    func testEveryModelOfTheCorpusGeneratesCodeThatCompilesAndMatchesTheModel() throws {
        guard let corpus = ProcessInfo.processInfo.environment["STRATA_XCODE_MODELS"] else {
            throw XCTSkip("set STRATA_XCODE_MODELS to a folder of Xcode models")
        }
        let package = Self.repository.appendingPathComponent(".build/codegen-corpus/Corpus")
        let sources = package.appendingPathComponent("Sources")
        try? FileManager.default.removeItem(at: sources)
        var modules: [(module: String, model: URL, list: String)] = []
        var refused: [String] = []
        for (index, model) in try models(in: URL(fileURLWithPath: corpus)).enumerated() {
            let generator: ModelCodeGenerator
            let file: GeneratedFile
            do {
                generator = try ModelCodeGenerator(contentsOf: model, selection: .allEntities, access: "public")
                file = try generator.files(layout: .oneFile)[0]
            } catch {
                let message = "\(error)"
                XCTAssertTrue(message.contains("entity ") && (message.contains("Swift") || message.contains("would both generate")),
                              "\(model.lastPathComponent): refused for another reason: \(message)")
                refused.append("\(model.lastPathComponent): \(message)")
                continue
            }
            let module = "M\(index)"
            try GeneratedFiles.write(file.contents, to: sources.appendingPathComponent("\(module)/\(file.name)"))
            modules.append((module, model, generator.listName))
        }
        XCTAssertFalse(modules.isEmpty)
        try writePackage(at: package, modules: modules)

        let build = try runChildProcess("swift", ["build", "--package-path", package.path, "--scratch-path", package.deletingLastPathComponent().appendingPathComponent("scratch").path])
        XCTAssertEqual(build.status, 0, String(build.output.suffix(6000)))
        guard build.status == 0 else { return }
        let check = try runChildProcess(package.deletingLastPathComponent().appendingPathComponent("scratch/debug/CorpusCheck").path, [])
        XCTAssertEqual(check.status, 0, check.output)
        let checked = check.output.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count
        XCTAssertEqual(checked, modules.count, check.output)
        print("codegen corpus: \(modules.count) models generated, compiled and matched their models; \(refused.count) refused:\n  " + refused.joined(separator: "\n  "))
    }

    private func writePackage(at package: URL, modules: [(module: String, model: URL, list: String)]) throws {
        let targets = modules.map { "        .target(name: \"\($0.module)\", dependencies: [.product(name: \"Strata\", package: strata)]),\n" }.joined()
        let manifest = """
        // swift-tools-version: 6.0
        import PackageDescription
        let strata = "\(Self.repository.lastPathComponent.lowercased())"
        let package = Package(
            name: "Corpus",
            platforms: [.macOS(.v15)],
            dependencies: [.package(path: "\(Self.repository.path)")],
            targets: [
        \(targets)        .executableTarget(name: "CorpusCheck", dependencies: [.product(name: "Strata", package: strata), \(modules.map { "\"\($0.module)\"" }.joined(separator: ", "))]),
            ]
        )

        """
        try GeneratedFiles.write(manifest, to: package.appendingPathComponent("Package.swift"))
        let imports = modules.map { "import \($0.module)" }.joined(separator: "\n")
        let calls = modules.map { "check(\(AttributeSwiftType.stringLiteral($0.model.lastPathComponent)), \(AttributeSwiftType.stringLiteral($0.model.path)), \($0.module).\($0.list).managedObjectClasses)" }
            .joined(separator: "\n")
        try GeneratedFiles.write(Self.checker + "\n" + imports + "\n\n" + calls + "\nexit(failed ? 1 : 0)\n",
                                 to: package.appendingPathComponent("Sources/CorpusCheck/main.swift"))
    }

    /// The checker's code: compares the file's model with the model of the generated classes.
    private static let checker = #"""
    import Foundation
    import Strata

    nonisolated(unsafe) var failed = false

    func check(_ name: String, _ path: String, _ classes: [ManagedObject.Type]) {
        var problems: [String] = []
        do {
            let file = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: path), classes: classes)
            let built = try ManagedObjectModel(classes: classes)
            for model in [file, built] {   // resolves destinations and inverses
                try PersistentStoreCoordinator(managedObjectModel: model).addPersistentStore(type: .inMemory, configuration: nil, at: URL(fileURLWithPath: "/dev/null"), options: nil)
            }
            for entity in file.entities {
                guard let other = built.entities.first(where: { $0.managedObjectClass == entity.managedObjectClass }) else {
                    problems.append("\(entity.name): no entity of its class"); continue
                }
                if other.superentity?.managedObjectClass != entity.superentity?.managedObjectClass {
                    problems.append("\(entity.name): superentity differs")
                }
                let mine = Dictionary(entity.properties.filter { !($0 is FetchedPropertyDescription) }.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
                let theirs = Dictionary(other.properties.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
                if Set(mine.keys) != Set(theirs.keys) {
                    problems.append("\(entity.name): properties \(mine.keys.sorted()) vs \(theirs.keys.sorted())")
                }
                for (key, property) in mine {
                    switch (property, theirs[key]) {
                    case (let a as AttributeDescription, let b as AttributeDescription):
                        // A transformable whose model names no class is generated as its bytes (Data).
                        let bytes = a.type == .transformable && b.type == .binaryData && (a.attributeValueClassName ?? ".").count <= 1
                        if a.type != b.type && !bytes { problems.append("\(entity.name).\(key): \(a.type) vs \(b.type)") }
                    case (let a as RelationshipDescription, let b as RelationshipDescription):
                        if a.isToMany != b.isToMany || a.isOrdered != b.isOrdered
                            || a.destinationEntity?.managedObjectClass != b.destinationEntity?.managedObjectClass {
                            problems.append("\(entity.name).\(key): relationship differs")
                        }
                    case (_, nil): break
                    default: problems.append("\(entity.name).\(key): kind differs")
                    }
                }
            }
        } catch {
            problems.append("\(error)")
        }
        if problems.isEmpty {
            print("ok \(name)")
        } else {
            failed = true
            print("FAIL \(name): " + problems.joined(separator: "; "))
        }
    }
    """#

}
