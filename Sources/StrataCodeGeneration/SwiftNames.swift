// SwiftNames: what a model's names become in Swift source: identifiers checked, keywords escaped,
// names that would collide with ManagedObject's own members refused.
//
// Owns: the keyword and reserved-member lists and the identifier grammar the generator applies.
// Every refusal is a thrown error naming the entity and the property. Never emits declarations
// (EntitySource does).

import Foundation
import StrataCore

enum SwiftNames {
    /// Words that must be escaped with backticks to be used as a declaration name.
    static let keywords: Set<String> = [
        "associatedtype", "borrowing", "class", "consuming", "deinit", "enum", "extension", "fileprivate", "func",
        "import", "init", "inout", "internal", "let", "nonisolated", "open", "operator", "private", "precedencegroup",
        "protocol", "public", "rethrows", "static", "struct", "subscript", "typealias", "var", "break", "case",
        "catch", "continue", "default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat",
        "return", "throw", "switch", "where", "while", "as", "false", "is", "nil", "super", "throws", "true", "try",
        "await", "any", "some", "package",
    ]

    /// Names no generated declaration may take even escaped: `self` and `Type` mean something else
    /// in key paths and member lookups, `Self`/`Any`/`Protocol` cannot name a type.
    static let unusable: Set<String> = ["self", "Self", "Type", "Protocol", "Any", "init", "deinit", "subscript", "super"]

    /// ManagedObject's members a property of a subclass would collide with (overriding a stored
    /// or final member, or shadowing one that contexts and fetches call).
    static let managedObjectMembers: Set<String> = [
        "entity", "objectID", "managedObjectContext", "isFault", "isInserted", "isDeleted", "isUpdated", "hasChanges",
        "hasPersistentChangedValues", "description", "hashValue", "awakeFromInsert", "awakeFromFetch",
        "willSave", "didSave", "prepareForDeletion", "willTurnIntoFault", "didTurnIntoFault", "validateForInsert",
        "validateForUpdate", "validateForDelete", "changedValues", "defaultEntityName",
    ]

    /// Whether `name` is a Swift identifier (letters, digits and `_`, not starting with a digit).
    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first else { return false }
        guard first == "_" || first.properties.isXIDStart else { return false }
        return name.unicodeScalars.dropFirst().allSatisfy { $0 == "_" || $0.properties.isXIDContinue }
    }

    /// `name` as a declaration name, escaped when it is a keyword.
    static func escaped(_ name: String) -> String {
        keywords.contains(name) ? "`\(name)`" : name
    }

    /// The name of a property, checked: throws when it cannot be a Swift property of a managed
    /// object subclass.
    static func propertyName(_ name: String, entity: String) throws -> String {
        guard isIdentifier(name) else {
            throw StrataError(.invalidModel, "entity \(entity), property '\(name)': the name is not a Swift identifier, so no Swift property can have it (rename it in the model)")
        }
        guard !unusable.contains(name) else {
            throw StrataError(.invalidModel, "entity \(entity), property '\(name)': Swift reserves this name (rename it in the model)")
        }
        guard !managedObjectMembers.contains(name) else {
            throw StrataError(.invalidModel, "entity \(entity), property '\(name)': the name is taken by ManagedObject's own '\(name)' (rename it in the model)")
        }
        return escaped(name)
    }

    /// Modules the generated code names its types through (`Swift.String`, `Strata.Managed`): a
    /// class of the same name would hide them.
    static let qualifyingModules: Set<String> = ["Swift", "Foundation", "Strata"]

    /// The name of a generated type, checked: throws when it cannot be a Swift class name.
    static func typeName(_ name: String, entity: String) throws -> String {
        guard isIdentifier(name), !unusable.contains(name), !qualifyingModules.contains(name) else {
            throw StrataError(.invalidModel, "entity \(entity): the class name '\(name)' is not a usable Swift type name (set another class name in the model)")
        }
        return escaped(name)
    }

    /// An identifier made from a file name: characters that cannot be in one are dropped and the
    /// next letter capitalized (`Model 2` → `Model2`, `my-model` → `myModel`).
    static func identifier(fromFileName name: String) -> String {
        var result = ""
        var capitalizeNext = false
        for scalar in name.unicodeScalars {
            if scalar == "_" || scalar.properties.isXIDContinue {
                let text = String(scalar)
                result += capitalizeNext ? text.uppercased() : text
                capitalizeNext = false
            } else {
                capitalizeNext = !result.isEmpty
            }
        }
        if result.isEmpty { return "Model" }
        if let first = result.unicodeScalars.first, !first.properties.isXIDStart, first != "_" { result = "_" + result }
        return result
    }
}
