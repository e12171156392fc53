// ResultChart: the picture of a suite's results: one row per workload, one bar per peer showing
// Strata's ratio to it (the same ratios as ResultTable: >1 means Strata is better), on a
// logarithmic axis with a line at 1.0×, written as a standalone SVG file.
//
// Owns: the layout and the SVG text. Never measures, and never computes a ratio differently from
// the table (both use `ResultTable.ratio`).
import Foundation

enum ResultChart {
    /// Bar colours by peer, fixed so that charts of different suites read alike.
    static let colors: [String: String] = [
        "sqlite": "#3b6fb6", "lmdb": "#3a9a5b", "grdb": "#e08a2c", "strata batch insert": "#7a7a7a", "history": "#8e5bb5",
    ]

    struct Row {
        var workload: String
        var bars: [(peer: String, ratio: Double)]
    }

    /// The rows of a chart: each workload with a Strata value and at least one peer's.
    static func rows(_ results: [Measurement]) -> [Row] {
        var workloads: [String] = []
        for m in results where !workloads.contains(m.workload) { workloads.append(m.workload) }
        let peers = ResultTable.peers(of: results)
        let history = Set(results.map(\.system)).contains("strata+history")
        return workloads.compactMap { workload in
            var bars: [(String, Double)] = peers.compactMap { peer in
                ResultTable.ratio(results, workload, "strata", peer).map { (peer, $0) }
            }
            if history, let ratio = ResultTable.ratio(results, workload, "strata+history", "strata") { bars.append(("history", ratio)) }
            return bars.isEmpty ? nil : Row(workload: workload, bars: bars)
        }
    }

    /// The SVG document. `caption` names when, where and at which commit the numbers were taken.
    static func render(_ results: [Measurement], title: String, caption: String) -> String {
        let rows = rows(results)
        let ratios = rows.flatMap { $0.bars.map(\.ratio) }
        // A log2 axis over whole powers of two, always showing 0.5× to 2×.
        let low = min(-1, floor(log2(ratios.min() ?? 1)))
        let high = max(1, ceil(log2(ratios.max() ?? 1)))
        let labelWidth = 330.0, plotWidth = 560.0, barHeight = 14.0, rowGap = 10.0, top = 78.0
        let plotLeft = labelWidth + 10
        func x(_ ratio: Double) -> Double { plotLeft + (log2(ratio) - low) / (high - low) * plotWidth }
        let rowHeight = { (row: Row) in Double(row.bars.count) * barHeight + rowGap }
        let plotHeight = rows.reduce(0) { $0 + rowHeight($1) }
        let width = plotLeft + plotWidth + 70, height = top + plotHeight + 50

        var svg = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="10" y="22" font-size="16" font-weight="bold">\(escape(title))</text>
        <text x="10" y="40" fill="#555">\(escape(caption))</text>

        """
        // Legend.
        var legendX = 10.0
        let legendPeers = Array(Set(rows.flatMap { $0.bars.map(\.peer) })).sorted { order($0) < order($1) }
        for peer in legendPeers {
            let name = peer == "history" ? "Strata with history / Strata" : "Strata / \(peer)"
            svg += "<rect x=\"\(legendX)\" y=\"50\" width=\"12\" height=\"12\" fill=\"\(colors[peer] ?? "#999")\"/>"
            svg += "<text x=\"\(legendX + 16)\" y=\"60\">\(escape(name))</text>\n"
            legendX += 30 + Double(name.count) * 6.5
        }
        svg += "<text x=\"\(Int(width) - 10)\" y=\"60\" text-anchor=\"end\" fill=\"#555\">right of 1×: Strata better (faster, or smaller)</text>\n"
        // Grid: a line per power of two, the 1.0× line drawn last and heavier.
        for power in Int(low)...Int(high) {
            let ratio = pow(2, Double(power))
            let lineX = x(ratio)
            svg += "<line x1=\"\(fmt(lineX))\" y1=\"\(top - 6)\" x2=\"\(fmt(lineX))\" y2=\"\(fmt(top + plotHeight))\" stroke=\"#ddd\"/>"
            svg += "<text x=\"\(fmt(lineX))\" y=\"\(fmt(top + plotHeight + 16))\" text-anchor=\"middle\" fill=\"#555\">\(axisLabel(ratio))</text>\n"
        }
        // Rows: bars grow from the 1.0× line towards the ratio.
        var y = top
        for row in rows {
            let middle = y + Double(row.bars.count) * barHeight / 2
            svg += "<text x=\"\(fmt(labelWidth))\" y=\"\(fmt(middle + 4))\" text-anchor=\"end\">\(escape(row.workload))</text>\n"
            for (index, bar) in row.bars.enumerated() {
                let barY = y + Double(index) * barHeight
                let from = x(1), to = x(min(max(bar.ratio, pow(2, low)), pow(2, high)))
                let left = min(from, to), barWidth = max(1, abs(to - from))
                svg += "<rect x=\"\(fmt(left))\" y=\"\(fmt(barY + 1))\" width=\"\(fmt(barWidth))\" height=\"\(fmt(barHeight - 2))\" fill=\"\(colors[bar.peer] ?? "#999")\"><title>\(escape(row.workload)): Strata/\(escape(bar.peer)) \(String(format: "%.2f", bar.ratio))×</title></rect>"
                let labelX = bar.ratio >= 1 ? to + 4 : to - 4
                svg += "<text x=\"\(fmt(labelX))\" y=\"\(fmt(barY + barHeight - 3))\" font-size=\"10\" text-anchor=\"\(bar.ratio >= 1 ? "start" : "end")\">\(String(format: "%.2f", bar.ratio))×</text>\n"
            }
            y += rowHeight(row)
        }
        svg += "<line x1=\"\(fmt(x(1)))\" y1=\"\(top - 6)\" x2=\"\(fmt(x(1)))\" y2=\"\(fmt(top + plotHeight))\" stroke=\"#222\" stroke-width=\"2\"/>\n"
        svg += "</svg>\n"
        return svg
    }

    /// "when, where, which commit": the caption of a chart taken now on this machine.
    static func caption(records: Int, repeats: Int) -> String {
        let date = ISO8601DateFormatter().string(from: Date())
        var system = utsname()
        uname(&system)
        let machine = withUnsafeBytes(of: &system.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let memory = ProcessInfo.processInfo.physicalMemory >> 30
        return "\(date) · \(machine), \(cores) cores, \(memory) GiB · commit \(gitCommit() ?? "unknown") · \(ResultTable.format(Double(records), unit: "records")) records, median of \(repeats)"
    }

    /// The checked-out commit of the repository the benchmark runs from ("-dirty" with changes
    /// not committed), if git can say.
    static func gitCommit() -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "describe", "--always", "--dirty"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func order(_ peer: String) -> Int { ["sqlite", "grdb", "lmdb", "strata batch insert", "history"].firstIndex(of: peer) ?? 99 }

    static func axisLabel(_ ratio: Double) -> String {
        ratio >= 1 ? "\(Int(ratio))×" : "1/\(Int((1 / ratio).rounded()))×"
    }

    static func fmt(_ value: Double) -> String { String(format: "%.1f", value) }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
