// QuakeModel: the Earthquakes example's entity: one USGS earthquake, unique by its code.
//
// Owns: the managed class and the model built from it (a uniqueness constraint on `code`, fetch
// indexes on `time` and `magnitude`, and the UTC `day` the report groups by). Never imports or
// queries (Importer.swift and Report.swift do).

import Foundation
import Strata

final class Quake: ManagedObject {
    @Managed var code: String = ""
    @Managed var magnitude: Double = 0
    @Managed var place: String = ""
    @Managed var time: Date = .distantPast
    @Managed var updated: Date = .distantPast
    /// The UTC day of `time` ("2026-11-22"), for counts per day.
    @Managed var day: String = ""
    @Managed var depth: Double? = nil
    @Managed var latitude: Double = 0
    @Managed var longitude: Double = 0
    @Managed var status: String = ""
    @Managed var tsunami: Bool = false
    @Managed var url: String? = nil
}

enum QuakeModel {
    static func make() throws -> ManagedObjectModel {
        let model = try ManagedObjectModel(classes: [Quake.self])
        let quake = model.entitiesByName["Quake"]!
        quake.uniquenessConstraints = [["code"]]
        func index(_ name: String, _ attribute: String) -> FetchIndexDescription {
            FetchIndexDescription(name: name, elements: [FetchIndexElementDescription(property: quake.attributesByName[attribute]!)])
        }
        quake.indexes = [index("byTime", "time"), index("byMagnitude", "magnitude"), index("byDay", "day")]
        return model
    }
}
