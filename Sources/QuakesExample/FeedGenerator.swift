// FeedGenerator: realistic synthetic earthquake feeds in the USGS GeoJSON summary format, for the
// shipped sample and for tests.
//
// Owns: the shape of the data: magnitudes following Gutenberg-Richter (many small quakes, few
// large, b = 1), places in the USGS style ("12 km NNE of Ridgecrest, CA") over real seismic
// regions with plausible coordinates and depths, per-network codes, times over 30 days (newest
// first, as USGS orders them), reviewed/automatic status, tsunami flags offshore, and a few
// features without magnitude. Deterministic for a seed. Never touches the store.

import Foundation

struct FeedGenerator {
    /// SplitMix64: the same feed for the same seed on every platform.
    private struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
        mutating func between(_ low: Double, _ high: Double) -> Double { low + (high - low) * unit() }
    }

    private struct Region {
        let net: String
        let suffix: String
        let towns: [String]
        let latitude: ClosedRange<Double>
        let longitude: ClosedRange<Double>
        let maxDepth: Double
        let offshore: Bool
        let weight: Int
    }

    private static let regions: [Region] = [
        Region(net: "ci", suffix: "CA", towns: ["Ridgecrest", "Borrego Springs", "Ocotillo Wells", "Anza", "Big Bear City", "Cabazon", "Searles Valley", "Malibu"], latitude: 32.5...36.0, longitude: -119.0...(-115.5), maxDepth: 20, offshore: false, weight: 24),
        Region(net: "nc", suffix: "CA", towns: ["The Geysers", "Cobb", "Petrolia", "Ferndale", "Mammoth Lakes", "Pinnacles", "Aromas", "Cupertino"], latitude: 36.0...41.0, longitude: -124.5...(-118.5), maxDepth: 25, offshore: false, weight: 20),
        Region(net: "ak", suffix: "Alaska", towns: ["Sand Point", "Nikiski", "Petersville", "Chignik", "Susitna", "Adak", "Unalaska", "Yakutat"], latitude: 51.0...64.0, longitude: -179.0...(-140.0), maxDepth: 150, offshore: true, weight: 22),
        Region(net: "hv", suffix: "Hawaii", towns: ["Pāhala", "Volcano", "Naalehu", "Hawaiian Ocean View", "Honaunau-Napoopoo"], latitude: 18.9...20.2, longitude: -156.1...(-154.8), maxDepth: 40, offshore: true, weight: 8),
        Region(net: "nn", suffix: "Nevada", towns: ["Mina", "Dayton", "Silver Springs", "Tonopah", "Gabbs"], latitude: 37.0...40.5, longitude: -120.0...(-115.0), maxDepth: 15, offshore: false, weight: 6),
        Region(net: "uu", suffix: "Utah", towns: ["Magna", "Beaver", "Randolph", "Cedar City"], latitude: 37.0...42.0, longitude: -114.0...(-109.0), maxDepth: 15, offshore: false, weight: 3),
        Region(net: "pr", suffix: "Puerto Rico", towns: ["Maricao", "Guánica", "Indios", "Tallaboa", "Arecibo"], latitude: 17.5...19.5, longitude: -68.0...(-64.5), maxDepth: 60, offshore: true, weight: 5),
        Region(net: "ok", suffix: "Oklahoma", towns: ["Medford", "Perry", "Guthrie", "Pawnee"], latitude: 34.0...37.0, longitude: -99.0...(-95.5), maxDepth: 10, offshore: false, weight: 2),
        Region(net: "us", suffix: "Japan", towns: ["Iwaki", "Ōfunato", "Hachinohe", "Namie", "Miyako"], latitude: 33.0...42.0, longitude: 138.0...145.0, maxDepth: 300, offshore: true, weight: 4),
        Region(net: "us", suffix: "Indonesia", towns: ["Sinabang", "Bengkulu", "Ternate", "Abepura", "Kupang"], latitude: -10.0...5.0, longitude: 95.0...140.0, maxDepth: 600, offshore: true, weight: 4),
        Region(net: "us", suffix: "Chile", towns: ["Ovalle", "Iquique", "Calama", "La Serena", "Talcahuano"], latitude: -40.0...(-18.0), longitude: -74.0...(-68.0), maxDepth: 200, offshore: true, weight: 3),
    ]
    private static let directions = ["N", "NNE", "NE", "ENE", "E", "ESE", "SE", "SSE", "S", "SSW", "SW", "WSW", "W", "WNW", "NW", "NNW"]

    let count: Int
    let seed: UInt64
    /// The newest quake's time (the feed covers the 30 days before it).
    let end: Date

    init(count: Int, seed: UInt64 = 2026, end: Date = Date(timeIntervalSince1970: 1_795_132_800)) {
        self.count = count
        self.seed = seed
        self.end = end
    }

    /// The collection's metadata object.
    private var metadata: [String: Any] {
        [
            "generated": Int64(end.timeIntervalSince1970 * 1000),
            "url": "https://earthquake.usgs.gov/earthquakes/feed/v1.0/summary/all_month.geojson",
            "title": "USGS All Earthquakes, Past Month (synthetic, seed \(seed))",
            "status": 200,
            "api": "1.10.3",
            "count": count,
        ]
    }

    /// Calls `body` with each feature, newest first.
    func forEachFeature(_ body: ([String: Any]) throws -> Void) rethrows {
        var random = Random(state: seed)
        let totalWeight = Self.regions.reduce(0) { $0 + $1.weight }
        var offsets = (0..<count).map { _ in random.unit() * 30 * 86_400 }
        offsets.sort()   // newest first: smallest offset before `end` first
        var serial: [String: Int] = [:]
        for offset in offsets {
            var pick = random.below(totalWeight)
            let region = Self.regions.first { pick -= $0.weight; return pick < 0 }!
            // Gutenberg-Richter above the network's completeness magnitude.
            let floor = region.net == "us" ? 4.0 : (region.net == "ak" ? 1.0 : 0.3)
            let magnitude = (min(8.6, floor - log10(max(random.unit(), 1e-9))) * 100).rounded() / 100
            let number = (serial[region.net] ?? 0) + 1
            serial[region.net] = number
            let code = region.net == "us" ? String(format: "7000%04x", number) : String(format: "%d%07d", 4 + random.below(5), number)
            let id = region.net + code
            let town = region.towns[random.below(region.towns.count)]
            let place = "\(1 + random.below(120)) km \(Self.directions[random.below(16)]) of \(town), \(region.suffix)"
            let time = end.addingTimeInterval(-offset)
            let milliseconds = Int64(time.timeIntervalSince1970 * 1000)
            let depth = (random.unit() * random.unit() * region.maxDepth * 100).rounded() / 100
            let latitude = (random.between(region.latitude.lowerBound, region.latitude.upperBound) * 10_000).rounded() / 10_000
            let longitude = (random.between(region.longitude.lowerBound, region.longitude.upperBound) * 10_000).rounded() / 10_000
            let reviewed = offset > 2 * 86_400 || random.unit() < 0.3
            let withoutMagnitude = random.unit() < 0.003
            let magType = magnitude >= 5 ? "mww" : (magnitude >= 4 ? "mb" : (region.net == "ak" ? "ml" : "md"))
            let type = random.unit() < 0.02 ? "quarry blast" : (random.unit() < 0.005 ? "explosion" : "earthquake")
            let felt: Any = magnitude >= 3 ? Int(pow(10, magnitude - 2.5) * random.unit()) : NSNull()
            let properties: [String: Any] = [
                "mag": withoutMagnitude ? NSNull() : magnitude as Any,
                "place": place,
                "time": milliseconds,
                "updated": milliseconds + Int64(random.below(3 * 86_400_000)),
                "tz": NSNull(),
                "url": "https://earthquake.usgs.gov/earthquakes/eventpage/\(id)",
                "detail": "https://earthquake.usgs.gov/earthquakes/feed/v1.0/detail/\(id).geojson",
                "felt": felt,
                "cdi": magnitude >= 3 ? (min(9, magnitude * 1.2) * 10).rounded() / 10 as Any : NSNull(),
                "mmi": magnitude >= 4 ? (min(9, magnitude * 1.1) * 1000).rounded() / 1000 as Any : NSNull(),
                "alert": magnitude >= 4.5 ? (magnitude >= 6.5 ? "yellow" : "green") as Any : NSNull(),
                "status": reviewed ? "reviewed" : "automatic",
                "tsunami": region.offshore && magnitude >= 6.5 ? 1 : 0,
                "sig": Int(max(0, magnitude) * magnitude * 12) + (magnitude >= 4 ? 100 : 0),
                "net": region.net,
                "code": code,
                "ids": ",\(id),",
                "sources": ",\(region.net),",
                "types": magnitude >= 3 ? ",dyfi,origin,phase-data,shakemap," : ",origin,phase-data,",
                "nst": magnitude < 4 ? 8 + random.below(60) as Any : NSNull(),
                "dmin": (random.unit() * 0.5 * 10_000).rounded() / 10_000,
                "rms": (random.unit() * 0.6 * 100).rounded() / 100,
                "gap": 30 + random.below(250),
                "magType": magType,
                "type": type,
                "title": "M \(String(format: "%.1f", magnitude)) - \(place)",
            ]
            try body([
                "type": "Feature",
                "properties": properties,
                "geometry": ["type": "Point", "coordinates": [longitude, latitude, depth]],
                "id": id,
            ])
        }
    }

    /// The feed as compact JSON bytes.
    func data() throws -> Data {
        var data = Data()
        try write { data.append($0) }
        return data
    }

    /// Writes the feed as compact JSON with sorted keys, a feature at a time: a million features
    /// need the memory of one, not of a million dictionaries. The values are written by
    /// `FeedJSON` (JSONSerialization sorted each feature's keys with locale-aware comparisons:
    /// a million features took five and a half minutes).
    func write(_ output: (Data) throws -> Void) throws {
        var bytes: [UInt8] = Array(#"{"features":["#.utf8)
        var first = true
        try forEachFeature { feature in
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            FeedJSON.append(feature, to: &bytes)
            if bytes.count >= 1 << 16 {
                try output(Data(bytes))
                bytes.removeAll(keepingCapacity: true)
            }
        }
        bytes.append(contentsOf: #"],"metadata":"#.utf8)
        FeedJSON.append(metadata, to: &bytes)
        bytes.append(contentsOf: #","type":"FeatureCollection"}"#.utf8)
        try output(Data(bytes))
    }
}
