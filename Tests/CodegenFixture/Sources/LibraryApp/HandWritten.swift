// HandWritten: the classes the Library model leaves to the app: Shelf's code generation is
// `category` (the plugin writes only its properties, in an extension), Note's is Manual/None (the
// app writes all of it). Stamp has no class: its objects are plain ManagedObjects.

import Strata

public final class Shelf: ManagedObject {
    /// App code beside the generated properties.
    var summary: String { "\(label) (\(books.count) books)" }
}

public final class Note: ManagedObject {
    @Managed var text: String = ""
    @Managed var book: Book?
}
