// SectionEntries: one section's entries of a results layout, in order, in chunks.
//
// Owns: the entry numbers and object IDs of a section as a list of chunks of at most
// `chunkLimit` entries (a full chunk is split in two; the one chunk a fetch makes is cut up at its
// first change), so an insert or a removal moves the entries of one chunk, not of the section: a save that moved one object in a
// 1,000,000-object controller moved 36 MB of entries (3 ms) when a section was one array.
// Positions are found by binary search over the chunks' last entries, then within a chunk.
// Snapshots share the chunks' ID arrays (a change then copies one chunk, not the section).
// Never compares keys itself (the layout passes the comparison).

struct SectionEntries {
    struct Chunk {
        var numbers: [Int32]
        var ids: [ManagedObjectID]
    }
    /// Where an entry is: its chunk and its place in the chunk.
    struct Location {
        var chunk: Int
        var offset: Int
    }

    static let chunkLimit = 2048
    private(set) var chunks: [Chunk] = []
    private(set) var count = 0

    init() {}

    /// Entries already in order, as one chunk (sharing `ids`): it is cut into chunks when it is
    /// first changed, so fetching copies no ID and a controller never changed never pays it.
    init(numbers: Range<Int32>, ids: [ManagedObjectID]) {
        count = ids.count
        if count > 0 { chunks = [Chunk(numbers: numbers.map { $0 }, ids: ids)] }
    }

    /// Cuts chunk `index`, when it is larger than `chunkLimit`, into chunks of half that; returns
    /// the location of `location` (in that chunk) afterwards.
    private mutating func cutIfLarge(_ location: Location) -> Location {
        guard location.chunk < chunks.count, chunks[location.chunk].numbers.count > Self.chunkLimit else { return location }
        let large = chunks[location.chunk]
        let size = Self.chunkLimit / 2
        var pieces: [Chunk] = []
        pieces.reserveCapacity(large.numbers.count / size + 1)
        var start = 0
        while start < large.numbers.count {
            let end = min(large.numbers.count, start + size)
            pieces.append(Chunk(numbers: Array(large.numbers[start..<end]), ids: Array(large.ids[start..<end])))
            start = end
        }
        chunks.replaceSubrange(location.chunk...location.chunk, with: pieces)
        if location.offset >= large.numbers.count {
            return Location(chunk: location.chunk + pieces.count - 1, offset: pieces[pieces.count - 1].numbers.count)
        }
        return Location(chunk: location.chunk + location.offset / size, offset: location.offset % size)
    }

    /// The first location whose entry is not before the sought one (`isBefore(number)` says
    /// whether entry `number` comes before it), and its position in the section.
    func lowerBound(_ isBefore: (Int32) -> Bool) -> (location: Location, position: Int) {
        var low = 0, high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            if isBefore(chunks[middle].numbers[chunks[middle].numbers.count - 1]) { low = middle + 1 } else { high = middle }
        }
        guard low < chunks.count else {
            return (Location(chunk: chunks.count, offset: 0), count)
        }
        let numbers = chunks[low].numbers
        var first = 0, last = numbers.count
        while first < last {
            let middle = (first + last) / 2
            if isBefore(numbers[middle]) { first = middle + 1 } else { last = middle }
        }
        return (Location(chunk: low, offset: first), position(of: Location(chunk: low, offset: first)))
    }

    /// The position in the section of `location`.
    func position(of location: Location) -> Int {
        var position = location.offset
        for chunk in chunks.prefix(location.chunk) { position += chunk.numbers.count }
        return position
    }

    /// The location of `position` (0..<count).
    func location(of position: Int) -> Location {
        var rest = position
        for (index, chunk) in chunks.enumerated() {
            if rest < chunk.numbers.count { return Location(chunk: index, offset: rest) }
            rest -= chunk.numbers.count
        }
        return Location(chunk: chunks.count, offset: 0)
    }

    func number(at location: Location) -> Int32? {
        guard location.chunk < chunks.count, location.offset < chunks[location.chunk].numbers.count else { return nil }
        return chunks[location.chunk].numbers[location.offset]
    }

    func id(at location: Location) -> ManagedObjectID { chunks[location.chunk].ids[location.offset] }

    /// The first entry's number (the section is never empty while it exists).
    var firstNumber: Int32 { chunks[0].numbers[0] }

    /// Every object ID in order.
    var ids: [ManagedObjectID] { chunks.count == 1 ? chunks[0].ids : chunks.flatMap(\.ids) }

    /// The chunks' ID arrays, shared (for snapshots).
    var idChunks: [[ManagedObjectID]] { chunks.map(\.ids) }

    /// Inserts an entry at `location` (from ``lowerBound(_:)``).
    mutating func insert(_ number: Int32, id: ManagedObjectID, at location: Location) {
        count += 1
        if chunks.isEmpty {
            chunks.append(Chunk(numbers: [number], ids: [id]))
            return
        }
        // Past the end: into the last chunk.
        var place = location
        if place.chunk == chunks.count {
            place = Location(chunk: chunks.count - 1, offset: chunks[chunks.count - 1].numbers.count)
        }
        place = cutIfLarge(place)
        chunks[place.chunk].numbers.insert(number, at: place.offset)
        chunks[place.chunk].ids.insert(id, at: place.offset)
        if chunks[place.chunk].numbers.count > Self.chunkLimit {
            let full = chunks[place.chunk]
            let half = full.numbers.count / 2
            chunks[place.chunk] = Chunk(numbers: Array(full.numbers[..<half]), ids: Array(full.ids[..<half]))
            chunks.insert(Chunk(numbers: Array(full.numbers[half...]), ids: Array(full.ids[half...])), at: place.chunk + 1)
        }
    }

    /// Removes the entry at `location`.
    mutating func remove(at location: Location) {
        count -= 1
        let location = cutIfLarge(location)
        chunks[location.chunk].numbers.remove(at: location.offset)
        chunks[location.chunk].ids.remove(at: location.offset)
        if chunks[location.chunk].numbers.isEmpty { chunks.remove(at: location.chunk) }
    }

    /// Replaces the ID of the entry at `location`.
    mutating func setID(_ id: ManagedObjectID, at location: Location) {
        let location = cutIfLarge(location)
        chunks[location.chunk].ids[location.offset] = id
    }
}
