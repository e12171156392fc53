// ModelCodeGenerator: Swift sources for the managed object classes of an Xcode model, as Xcode's
// automatic code generation writes them; used by the StrataCodegen build plugin (through the
// strata-codegen tool) and by `storectl codegen`.
//
// Owns: reading the model (through ManagedObjectModel, so the generator and the run time read
// one model the same way, and a model the reader refuses fails with the reader's message), which
// entities get code (their `codeGenerationType`, or every entity on request), the per-model enum
// that lists the classes, and the file layout. Refuses, with the entity named, two entities that
// would generate one class. Never writes files (GeneratedFiles does).

import Foundation
import StrataGraph
import StrataCore

/// One generated Swift file.
package struct GeneratedFile: Equatable, Sendable {
    package let name: String
    package let contents: String
}

package struct ModelCodeGenerator {
    /// Which entities get code.
    package enum Selection: Sendable {
        /// As each entity's code generation setting in the model says (Xcode's build behaviour).
        case modelSettings
        /// Every entity gets its whole class (Xcode's "Create NSManagedObject Subclass…").
        case allEntities
    }

    /// How the code is split into files.
    package enum Layout: Sendable {
        /// One file for the model (what the build plugin writes).
        case oneFile
        /// A file per entity (`Quake+Strata.swift`) and one for the model's class list.
        case filePerEntity
    }

    package let model: ManagedObjectModel
    /// The model's name (`Quakes` for `Quakes.xcdatamodeld`).
    package let modelName: String
    /// The file the model was read from, as messages and the header show it.
    package let modelFile: String
    package let selection: Selection
    /// The declarations' access level (`internal` by default: a class may then use the app's
    /// internal types; `public` for a model in a library whose users see the classes).
    package let access: String
    private var accessPrefix: String { access == "internal" ? "" : access + " " }

    /// Reads the model at `url` (a `.xcdatamodeld`, a `.xcdatamodel` or a `contents` file).
    package init(contentsOf url: URL, selection: Selection = .modelSettings, access: String = "internal") throws {
        let model = try ManagedObjectModel(contentsOf: url)
        try model.freeze()
        self.model = model
        self.modelName = Self.modelName(of: url)
        self.modelFile = url.lastPathComponent
        self.selection = selection
        self.access = access
    }

    /// `Quakes` for `…/Quakes.xcdatamodeld`, `…/Quakes.xcdatamodel` and `…/Quakes.xcdatamodel/contents`.
    static func modelName(of url: URL) -> String {
        var named = url
        if named.lastPathComponent == "contents" { named.deleteLastPathComponent() }
        if named.pathExtension == "xcdatamodel", named.deletingLastPathComponent().pathExtension == "xcdatamodeld" {
            named.deleteLastPathComponent()
        }
        return named.deletingPathExtension().lastPathComponent
    }

    /// How `entity` is generated under this generator's selection.
    func generation(of entity: EntityDescription) -> EntityCodeGeneration {
        selection == .allEntities ? .classDefinition : EntityCodeGeneration(setting: entity.codeGenerationType)
    }

    /// The entities that get code, in model order.
    var generatedEntities: [EntityDescription] {
        model.entities.filter { generation(of: $0) != .manual }
    }

    /// The name of the enum that lists the model's classes (`QuakesModel`).
    package var listName: String {
        let base = SwiftNames.identifier(fromFileName: modelName)
        let name = base.hasSuffix("Model") ? base : base + "Model"
        let classNames = Set(model.entities.map { ManagedClassNames.className(of: $0) })
        return classNames.contains(name) ? name + "Classes" : name
    }

    /// The generated files, in a fixed order; throws naming the entity and property when a
    /// name cannot be declared in Swift.
    package func files(layout: Layout) throws -> [GeneratedFile] {
        try checkClassNames()
        let sources = try generatedEntities.map { entity in
            (entity, try EntitySource(entity: entity, generation: generation(of: entity), generationOf: generation, access: access).source())
        }
        let list = try classList()
        switch layout {
        case .oneFile:
            let body = sources.map(\.1).joined(separator: "\n") + (sources.isEmpty ? "" : "\n") + list
            return [GeneratedFile(name: "\(SwiftNames.identifier(fromFileName: modelName))+Strata.swift", contents: header() + body)]
        case .filePerEntity:
            var files = try sources.map { entity, source in
                GeneratedFile(name: "\(try EntitySource.typeName(of: entity))+Strata.swift", contents: header() + source)
            }
            files.append(GeneratedFile(name: "\(listName).swift", contents: header() + list))
            return files
        }
    }

    private func header() -> String {
        """
        // Generated by StrataCodegen from \(modelFile).
        // Do not edit: it is written again whenever the model changes.

        import Foundation
        import Strata


        """
    }

    /// The enum listing the classes of the generated entities, and loading the model with them.
    private func classList() throws -> String {
        let classes = try generatedEntities.map { try EntitySource.typeName(of: $0) + ".self" }
        return """
        /// The managed object classes StrataCodegen generated from \(modelFile): the classes of
        /// entities whose code generation is `class` or `category`. Pass them, with the classes of
        /// entities you write by hand, to `ManagedObjectModel(contentsOf:classes:)`.
        \(accessPrefix)enum \(listName) {
            \(accessPrefix)static var managedObjectClasses: [Strata.ManagedObject.Type] {
                [\(classes.joined(separator: ", "))]
            }

            /// The model at `url` (the `.xcdatamodeld` folder, e.g. from `Bundle.module`) with these classes.
            \(accessPrefix)static func load(contentsOf url: Foundation.URL) throws -> Strata.ManagedObjectModel {
                try Strata.ManagedObjectModel(contentsOf: url, classes: managedObjectClasses)
            }
        }

        """
    }

    /// Two generated entities with one class name would declare the class twice.
    private func checkClassNames() throws {
        var seen: [String: String] = [:]
        for entity in generatedEntities {
            let name = ManagedClassNames.className(of: entity)
            if let other = seen[name] {
                throw StrataError(.invalidModel, "\(modelFile): entities \(other) and \(entity.name) would both generate class \(name) (give one another class name, or set its code generation to Manual/None)")
            }
            seen[name] = entity.name
        }
        if seen[listName] != nil {
            throw StrataError(.invalidModel, "\(modelFile): the class list \(listName) has the name of an entity's class")
        }
    }
}
