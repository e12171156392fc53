// QuakeModel: the Earthquakes example's model: one USGS earthquake per `Quake`, unique by its code,
// with fetch indexes on `time`, `magnitude` and the UTC `day` the report groups by.
//
// The model is the Xcode model Earthquakes.xcdatamodeld beside this file. Its entity's code
// generation is "class": the StrataCodegen build plugin writes the `Quake` class from it on every
// build that changes it (into the build directory; nothing generated is in the source tree), and
// the model file ships as a resource and is read at run time, with that class.
//
// Owns: finding and loading the model. Never imports or queries (Importer.swift and Report.swift do).

import Foundation
import Strata

enum QuakeModel {
    static func make() throws -> ManagedObjectModel {
        guard let url = Bundle.module.url(forResource: "Earthquakes", withExtension: "xcdatamodeld") else {
            throw StrataError(.modelFile, "the Earthquakes model is missing from the resource bundle")
        }
        return try EarthquakesModel.load(contentsOf: url)
    }
}
