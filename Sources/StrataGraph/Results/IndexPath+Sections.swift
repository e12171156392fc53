// IndexPath+Sections: `IndexPath(item:section:)`, `.item` and `.section` where Foundation lacks
// them (UIKit and AppKit add them on Apple platforms; swift-corelibs-foundation has none).
//
// Owns: these three members only, on platforms without UIKit and AppKit. Never changes what an
// index path holds: two indexes, the section first.

import Foundation

#if !canImport(UIKit) && !canImport(AppKit)
extension IndexPath {
    /// An index path to the item at `item` of section `section`.
    public init(item: Int, section: Int) {
        self.init(indexes: [section, item])
    }

    /// The section (the first index).
    public var section: Int {
        get { self[0] }
        set { self[0] = newValue }
    }

    /// The item within the section (the second index).
    public var item: Int {
        get { self[1] }
        set { self[1] = newValue }
    }
}
#endif
