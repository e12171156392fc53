// PageSources: what the pager needs from the layers above it, as two small protocols.
//
// Owns: the pager's view of the WAL (`NewerPageVersions`: where a page's newest committed copy is,
// when the store file does not hold it) and of the B-tree (`PageValidator`: the structural checks
// a page must pass before anyone sees it). The WAL and B-tree layers implement them and the engine
// hands them to the pager, so the pager never calls up into those layers or the engine.

/// Committed page versions newer than the store file's (the WAL implements it).
protocol NewerPageVersions: Sendable {
    /// Reads the newest committed version of `page` into `buffer` and returns true, or returns
    /// false when the store file holds the newest version. A version is returned only after its
    /// own checks (checksum, page number, WAL life); one that cannot be read back throws.
    func readNewest(_ page: PageNumber, into buffer: PageBuffer) throws -> Bool
}

/// Structural checks of a page that passed its checksum (the B-tree layer implements them).
protocol PageValidator: Sendable {
    /// The problem with `page`, or nil when it is sound.
    func problem(in page: PageBuffer) -> String?
}
