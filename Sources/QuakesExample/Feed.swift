// Feed: the USGS GeoJSON summary format (https://earthquake.usgs.gov/earthquakes/feed/v1.0/geojson.php),
// read into plain values.
//
// Owns: parsing a FeatureCollection into `FeedQuake`s: `properties.mag`, `place`, `time` and
// `updated` (milliseconds since 1970), `code` (with `net`, unique per feature), `status`,
// `tsunami`, `url`, and `geometry.coordinates` [longitude, latitude, depth], one feature at a time
// (JSONMembers.swift). Malformed input is a `FeedError` naming what and where; features without a
// code are skipped and counted. Never touches the store.

import Foundation

struct FeedQuake: Sendable, Equatable {
    var code: String
    var magnitude: Double
    var place: String
    var time: Date
    var updated: Date
    var depth: Double?
    var latitude: Double
    var longitude: Double
    var status: String
    var tsunami: Bool
    var url: String?
}

struct FeedError: Error, CustomStringConvertible {
    let description: String
}

struct Feed: Sendable {
    var quakes: [FeedQuake]
    /// Features without a code (they cannot be matched on a later import).
    var skipped: Int

    init(quakes: [FeedQuake], skipped: Int = 0) {
        self.quakes = quakes
        self.skipped = skipped
    }

    /// Parses GeoJSON data; `source` names it in errors. The features are parsed one at a time
    /// (JSONMembers.swift finds each one's bytes): a feed of any size needs the memory of its
    /// quakes, not of its whole object graph.
    init(data: Data, source: String) throws {
        var quakes: [FeedQuake] = []
        var skipped = 0
        var sawFeatures = false
        func json(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) throws -> Any {
            do {
                return try JSONSerialization.jsonObject(with: Data(UnsafeRawBufferPointer(rebasing: bytes[range])), options: .fragmentsAllowed)
            } catch {
                throw FeedError(description: "\(source) is not JSON: \(error.localizedDescription) (bytes \(range.lowerBound)..<\(range.upperBound))")
            }
        }
        try data.withUnsafeBytes { bytes in
            let document = JSONMembers(bytes: bytes)
            do {
                try document.forEachMember { key, value in
                    guard key == "features", bytes[value.lowerBound] == UInt8(ascii: "[") else {
                        _ = try json(bytes, value)   // checked, not kept
                        return
                    }
                    sawFeatures = true
                    var position = 0
                    try document.forEachElement(ofArrayAt: value) { element in
                        defer { position += 1 }
                        if let quake = try Self.quake(from: try json(bytes, element), position: position, source: source) {
                            quakes.append(quake)
                        } else {
                            skipped += 1
                        }
                    }
                }
            } catch let error as JSONMembersError {
                if error.problem == "the document is not an object",
                   (try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)) != nil {
                    throw FeedError(description: "\(source) is not a GeoJSON FeatureCollection (no \"features\" array)")
                }
                throw FeedError(description: "\(source) is not JSON: \(error)")
            }
        }
        guard sawFeatures else {
            throw FeedError(description: "\(source) is not a GeoJSON FeatureCollection (no \"features\" array)")
        }
        self.init(quakes: quakes, skipped: skipped)
    }

    /// The quake of one feature (nil: it has no code, and is skipped).
    static func quake(from item: Any, position: Int, source: String) throws -> FeedQuake? {
        guard let feature = item as? [String: Any], let properties = feature["properties"] as? [String: Any] else {
            throw FeedError(description: "\(source): feature \(position) has no \"properties\" object")
        }
        guard let code = properties["code"] as? String, !code.isEmpty else { return nil }
        func number(_ key: String) -> Double? { (properties[key] as? NSNumber)?.doubleValue }
        guard let time = number("time") else {
            throw FeedError(description: "\(source): feature \(position) (\(code)) has no numeric \"time\"")
        }
        let net = properties["net"] as? String ?? ""
        let coordinates = ((feature["geometry"] as? [String: Any])?["coordinates"] as? [Any])?.compactMap { ($0 as? NSNumber)?.doubleValue } ?? []
        return FeedQuake(
            code: net + code,
            magnitude: number("mag") ?? 0,
            place: properties["place"] as? String ?? "",
            time: Date(timeIntervalSince1970: time / 1000),
            updated: Date(timeIntervalSince1970: (number("updated") ?? time) / 1000),
            depth: coordinates.count > 2 ? coordinates[2] : nil,
            latitude: coordinates.count > 1 ? coordinates[1] : 0,
            longitude: coordinates.first ?? 0,
            status: properties["status"] as? String ?? "",
            tsunami: (number("tsunami") ?? 0) != 0,
            url: properties["url"] as? String)
    }

    /// Reads and parses the file at `path`.
    init(contentsOf path: String) throws {
        // Mapped, not read: the file's pages are the operating system's to drop and read again.
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) else {
            throw FeedError(description: "cannot read \(path)")
        }
        try self.init(data: data, source: path)
    }
}
