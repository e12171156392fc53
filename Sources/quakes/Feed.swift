// Feed: the USGS GeoJSON summary format (https://earthquake.usgs.gov/earthquakes/feed/v1.0/geojson.php),
// read into plain values.
//
// Owns: parsing a FeatureCollection into `FeedQuake`s: `properties.mag`, `place`, `time` and
// `updated` (milliseconds since 1970), `code` (with `net`, unique per feature), `status`,
// `tsunami`, `url`, and `geometry.coordinates` [longitude, latitude, depth]. Malformed input is
// a `FeedError` naming what and where; features without a code are skipped and counted. Never
// touches the store.

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

    /// Parses GeoJSON data; `source` names it in errors.
    init(data: Data, source: String) throws {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw FeedError(description: "\(source) is not JSON: \(error.localizedDescription)")
        }
        guard let collection = root as? [String: Any], let features = collection["features"] as? [Any] else {
            throw FeedError(description: "\(source) is not a GeoJSON FeatureCollection (no \"features\" array)")
        }
        var quakes: [FeedQuake] = []
        quakes.reserveCapacity(features.count)
        var skipped = 0
        for (position, item) in features.enumerated() {
            guard let feature = item as? [String: Any], let properties = feature["properties"] as? [String: Any] else {
                throw FeedError(description: "\(source): feature \(position) has no \"properties\" object")
            }
            guard let code = properties["code"] as? String, !code.isEmpty else {
                skipped += 1
                continue
            }
            func number(_ key: String) -> Double? { (properties[key] as? NSNumber)?.doubleValue }
            guard let time = number("time") else {
                throw FeedError(description: "\(source): feature \(position) (\(code)) has no numeric \"time\"")
            }
            let net = properties["net"] as? String ?? ""
            let coordinates = ((feature["geometry"] as? [String: Any])?["coordinates"] as? [Any])?.compactMap { ($0 as? NSNumber)?.doubleValue } ?? []
            quakes.append(FeedQuake(
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
                url: properties["url"] as? String))
        }
        self.init(quakes: quakes, skipped: skipped)
    }

    /// Reads and parses the file at `path`.
    init(contentsOf path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FeedError(description: "cannot read \(path)")
        }
        try self.init(data: data, source: path)
    }
}
