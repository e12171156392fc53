// XcodeModelReader: reads Xcode's `.xcdatamodeld` / `.xcdatamodel` model files.
// (Being written: until it is, reading a model file throws a clear error.)

import Foundation

extension ManagedObjectModel {
    /// A model read from an Xcode model: a `.xcdatamodeld` directory (its current version), a
    /// `.xcdatamodel` directory, or a `.xcdatamodel/contents` XML file.
    public convenience init(contentsOf url: URL) throws {
        throw StrataError(.modelFile, "\(url.path): reading Xcode model files is not available in this build")
    }
}
