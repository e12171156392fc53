// ResultTable: the human-readable table: one row per workload, one column per system, and the
// Strata/peer ratios (>1 means Strata is better: higher rates, or smaller sizes and RSS); with
// Strata recording history too, its ratio to Strata without (the cost of history).
import Foundation

enum ResultTable {
    static func render(_ results: [Measurement], records: Int) -> String {
        var workloads: [String] = []
        for m in results where !workloads.contains(m.workload) { workloads.append(m.workload) }
        // Columns for the systems measured, in this order; "strata+history" is Strata with
        // persistent history recorded (`--systems strata,strata+history,sqlite`).
        let present = Set(results.map(\.system))
        // "strata batch insert" is the yardstick of the sqlite-file suite's migration workload.
        var systems = ["strata", "strata+history", "strata batch insert", "sqlite", "grdb", "lmdb"].filter { present.contains($0) }
        if systems.isEmpty { systems = ["strata", "sqlite", "lmdb"] }
        let peers = Self.peers(of: results)
        let history = systems.contains("strata+history")
        var header = ["workload (\(records) records)"] + systems + ["unit"] + peers.map { "strata/\($0 == "strata batch insert" ? "batch insert" : $0)" }
        if history { header.append("history/strata") }
        var rows: [[String]] = [header]
        for workload in workloads {
            let value = { (system: String) in results.first { $0.workload == workload && $0.system == system } }
            let unit = results.first { $0.workload == workload }!.unit
            func ratio(_ system: String, _ peer: String) -> String {
                Self.ratio(results, workload, system, peer).map { String(format: "%.2fx", $0) } ?? "-"
            }
            var row = [workload] + systems.map { value($0).map { format($0.value, unit: unit) } ?? "-" } + [unit]
            row += peers.map { ratio("strata", $0) }
            if history { row.append(ratio("strata+history", "strata")) }
            rows.append(row)
        }
        let unitColumn = systems.count + 1
        let widths = rows[0].indices.map { c in rows.map { $0[c].count }.max()! }
        return rows.map { row in
            row.enumerated().map { c, cell in c == 0 || c == unitColumn ? cell.padding(toLength: widths[c], withPad: " ", startingAt: 0) : String(repeating: " ", count: widths[c] - cell.count) + cell }
                .joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// The peers Strata is compared with, in column order.
    static func peers(of results: [Measurement]) -> [String] {
        let present = Set(results.map(\.system))
        return ["strata batch insert", "sqlite", "grdb", "lmdb"].filter { present.contains($0) }
    }

    /// How many times better `system` is than `peer` at `workload` (higher rates, or smaller sizes
    /// and RSS); nil when either was not measured.
    static func ratio(_ results: [Measurement], _ workload: String, _ system: String, _ peer: String) -> Double? {
        let value = { (system: String) in results.first { $0.workload == workload && $0.system == system } }
        guard let s = value(system), let p = value(peer), s.value > 0, p.value > 0 else { return nil }
        let lowerIsBetter = s.unit == "bytes" || s.unit == "pages"
        return lowerIsBetter ? p.value / s.value : s.value / p.value
    }

    static func format(_ value: Double, unit: String) -> String {
        if unit == "bytes" { return String(format: "%.1f MB", value / 1_000_000) }
        if value >= 100 { return String(Int(value.rounded())).reversed().enumerated().map { $0.offset > 0 && $0.offset % 3 == 0 ? "\($0.element)," : "\($0.element)" }.reversed().joined() }
        return String(format: "%.1f", value)
    }
}
