// Report: what the example prints after an import: quakes in the last 5 hours of the feed, the
// 10 largest, and the count per UTC day.
//
// Owns: the three queries, written as a Core Data user would (a count with a date predicate, a
// sorted fetch with a limit, a grouped dictionary fetch), each answered by an index of the store,
// and their formatting. Reads only; returns text.

import Foundation
import Strata

enum Report {
    /// The UTC day of a time, "yyyy-MM-dd".
    static func day(of date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }

    static func make(from container: PersistentContainer) async throws -> String {
        try await container.performBackgroundTask { context in
            var lines: [String] = []
            let total = try context.count(for: Quake.fetchRequest())
            lines.append("\(total) quakes in the store")

            let latestRequest = Quake.fetchRequest()
            latestRequest.sortDescriptors = [SortDescriptor(\Quake.time, order: .reverse)]
            latestRequest.fetchLimit = 1
            guard let latest = try context.fetch(latestRequest).first?.time else { return lines.joined(separator: "\n") }
            let fiveHoursBefore = latest.addingTimeInterval(-5 * 3600)
            let recent = Quake.fetchRequest()
            recent.predicate = try FetchPredicate(format: "time >= %@", fiveHoursBefore)
            lines.append("\(try context.count(for: recent)) quakes in the last 5 hours of the feed (since \(stamp(fiveHoursBefore)))")

            let largest = Quake.fetchRequest()
            largest.sortDescriptors = [SortDescriptor(\Quake.magnitude, order: .reverse)]
            largest.fetchLimit = 10
            lines.append("")
            lines.append("The 10 largest:")
            for quake in try context.fetch(largest) {
                lines.append("  M\(String(format: "%.1f", quake.magnitude).padding(toLength: 4, withPad: " ", startingAt: 0))  \(stamp(quake.time))  \(quake.place)  (\(quake.code))")
            }

            let perDay = FetchRequest<NSDictionary>(entityName: "Quake")
            let count = ExpressionDescription()
            count.name = "count"
            count.expression = FetchExpression(forFunction: "count:", arguments: [FetchExpression(forKeyPath: "code")])
            count.expressionResultType = .integer64
            perDay.propertiesToFetch = ["day", count]
            perDay.propertiesToGroupBy = ["day"]
            perDay.sortDescriptors = [FetchSortDescriptor(key: "day")]
            lines.append("")
            lines.append("Quakes per day (UTC):")
            let days = try context.fetch(perDay).map { row in
                (day: row["day"] as? String ?? "?", count: (row["count"] as? NSNumber)?.intValue ?? (row["count"] as? Int) ?? 0)
            }
            // Bars of at most 60 blocks, scaled to the busiest day (a day of the 5,000-quake
            // sample, about 170 quakes, was 17 blocks at 10 quakes a block; a day of a million-quake
            // feed was 33,000 blocks).
            let busiest = max(1, days.map(\.count).max() ?? 1)
            let perBlock = max(10, (busiest + 59) / 60)
            for (day, n) in days {
                lines.append("  \(day)  \(String(n).leftPadded(6))  " + String(repeating: "▇", count: max(1, n / perBlock)))
            }
            return lines.joined(separator: "\n")
        }
    }

    static func stamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withSpaceBetweenDateAndTime]
        return formatter.string(from: date) + " UTC"
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
