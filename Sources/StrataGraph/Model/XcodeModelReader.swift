// XcodeModelReader: finds the `contents` XML of an Xcode model and turns it into a ManagedObjectModel.
//
// Owns: locating the file (a compiled `.mom`/`.momd` goes to CompiledModelReader; a `.xcdatamodeld` bundle and its current version, named by
// `.xccurrentversion`; a `.xcdatamodel` directory; or a `contents` file given directly), reading
// it, and assembling the parsed descriptions into a validated model. The XML itself is read by
// XcodeModelParser. Every failure (missing file, unreadable version plist, bad XML, invalid
// model) throws a StrataError naming the path. It never matches classes to entities itself
// (ManagedObjectModel+Binding does) and never freezes the model: a coordinator does that when it
// first uses it.

import Foundation
import StrataCore

extension ManagedObjectModel {
    /// A model read from an Xcode model: a `.xcdatamodeld` directory (its current version), a
    /// `.xcdatamodel` directory, or a `.xcdatamodel/contents` XML file; or from Xcode's compiled
    /// form: a `.momd` folder (its current version) or a `.mom` file (see
    /// ``init(compiledModel:file:)``); or the model a Core Data SQLite store carries in its
    /// `Z_MODELCACHE` table (the model the store was last written with).
    ///
    /// Entities keep the class name Xcode records in ``EntityDescription/managedObjectClassName``.
    /// A module-qualified name (`MyApp.Quake`) of a class the process has gives the entity that
    /// class when the class agrees with it (else ``warnings`` says why not); otherwise ``EntityDescription/managedObjectClass`` stays ``ManagedObject``: pass the
    /// classes to ``init(contentsOf:classes:)`` (or set them) before the model is used. Parts of the file Strata does not use (fetch request
    /// templates, fetched properties…) are skipped and described in ``warnings``. Default values
    /// are read as Core Data reads them: text that is not of the attribute's type converts as
    /// Foundation's string conversions do ("NO" is 0, "0.0" is false), with a warning; text that
    /// nothing converts (a malformed UUID, URL or date) leaves no default, with a warning.
    ///
    /// ```swift
    /// let url = Bundle.module.url(forResource: "Earthquakes", withExtension: "xcdatamodeld")!
    /// let model = try ManagedObjectModel(contentsOf: url)
    /// for warning in model.warnings { print(warning) }
    /// ```
    ///
    /// Throws a ``StrataError`` with code `.modelFile` when the file is missing or not a valid
    /// model file (the message gives the path, line and column), and `.invalidModel` when the
    /// model it describes is inconsistent (a dangling inverse, a missing destination…).
    public convenience init(contentsOf url: URL) throws {
        if CompiledModelReader.isCoreDataStore(url) {
            let (bytes, file) = try CompiledModelReader.modelCache(ofStoreAt: url)
            try self.init(compiledModel: bytes, file: file)
            return
        }
        if CompiledModelReader.isCompiledModel(url) {
            let file = try CompiledModelReader.momFile(for: url)
            let bytes: [UInt8]
            do { bytes = Array(try Data(contentsOf: file)) } catch {
                throw StrataError(.modelFile, "\(file.path): cannot read the compiled model (\(error.localizedDescription))")
            }
            try self.init(compiledModel: bytes, file: file.path)
            return
        }
        let contentsURL = try XcodeModelLocator.contentsFile(for: url)
        let data: Data
        do {
            data = try Data(contentsOf: contentsURL)
        } catch {
            throw StrataError(.modelFile, "\(contentsURL.path): cannot read the model file (\(error.localizedDescription))")
        }
        let contents = try XcodeModelParser.parse(data, path: contentsURL.path)
        self.init(entities: contents.entities)
        warnings = contents.warnings
        if let identifier = contents.versionIdentifier, !identifier.isEmpty {
            versionIdentifiers = [identifier]
        }
        for configuration in contents.configurations {
            let byName = entitiesByName
            let members = configuration.entityNames.compactMap { byName[$0] }
            setEntities(members, forConfigurationName: configuration.name)
        }
        try validate()
        bindClassesFoundByName()
    }
}

/// Finds the `contents` file of an Xcode model given the URL a user passed.
enum XcodeModelLocator {
    /// The name of the plist in a `.xcdatamodeld` that names its current version.
    static let currentVersionFileName = ".xccurrentversion"
    /// The key in that plist.
    static let currentVersionKey = "_XCCurrentVersionName"

    /// The `contents` XML for `url`: the file itself, `url/contents` for a model version
    /// directory, or the current version's `contents` for a versioned bundle.
    static func contentsFile(for url: URL) throws -> URL {
        let fileManager = FileManager.default
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw StrataError(.modelFile, "\(url.path): no such model file or directory")
        }
        guard isDirectory.boolValue else { return url }
        if url.pathExtension == "xcdatamodeld" {
            return try versionContents(in: url)
        }
        let contents = url.appendingPathComponent("contents")
        if fileManager.fileExists(atPath: contents.path) { return contents }
        if url.pathExtension != "xcdatamodel", (try? versionDirectories(in: url))?.isEmpty == false {
            return try versionContents(in: url)
        }
        throw StrataError(.modelFile, "\(url.path): the model directory has no contents file (models last saved by Xcode 3 or earlier are not supported)")
    }

    /// The `contents` of the current version of the `.xcdatamodeld` bundle at `bundle`.
    static func versionContents(in bundle: URL) throws -> URL {
        let version = try currentVersion(in: bundle)
        let contents = version.appendingPathComponent("contents")
        guard FileManager.default.fileExists(atPath: contents.path) else {
            throw StrataError(.modelFile, "\(contents.path): the model version \(version.lastPathComponent) has no contents file")
        }
        return contents
    }

    /// The current version directory: the one `.xccurrentversion` names, or else the only (or
    /// last in numeric name order) `.xcdatamodel` in the bundle.
    static func currentVersion(in bundle: URL) throws -> URL {
        let plistURL = bundle.appendingPathComponent(currentVersionFileName)
        if FileManager.default.fileExists(atPath: plistURL.path) {
            let name = try currentVersionName(plistURL)
            let version = bundle.appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: version.path) else {
                throw StrataError(.modelFile, "\(plistURL.path): the current version \(name) does not exist in \(bundle.path)")
            }
            return version
        }
        let versions = try versionDirectories(in: bundle)
        guard let last = versions.last else {
            throw StrataError(.modelFile, "\(bundle.path): the model bundle contains no .xcdatamodel version")
        }
        return last
    }

    /// `_XCCurrentVersionName` from the plist at `url`.
    private static func currentVersionName(_ url: URL) throws -> String {
        let plist: Any
        do {
            plist = try PropertyListSerialization.propertyList(from: try Data(contentsOf: url), options: [], format: nil)
        } catch {
            throw StrataError(.modelFile, "\(url.path): not a readable property list (\(error.localizedDescription))")
        }
        guard let dictionary = plist as? [String: Any], let name = dictionary[currentVersionKey] as? String,
              !name.isEmpty, !name.contains("/") else {
            throw StrataError(.modelFile, "\(url.path): no \(currentVersionKey) string naming the current model version")
        }
        return name
    }

    /// The `.xcdatamodel` directories in `bundle`, sorted by name with numbers compared as numbers
    /// ("Model 9" before "Model 10").
    static func versionDirectories(in bundle: URL) throws -> [URL] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: bundle.path)
        } catch {
            throw StrataError(.modelFile, "\(bundle.path): cannot list the model bundle (\(error.localizedDescription))")
        }
        return names.filter { $0.hasSuffix(".xcdatamodel") }
            .sorted { $0.compare($1, options: [.numeric]) == .orderedAscending }
            .map { bundle.appendingPathComponent($0) }
    }
}
