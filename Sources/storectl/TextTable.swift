// TextTable: aligned columns for storectl's text output.
//
// Owns: padding cells to column widths (numbers right-aligned). Must never truncate a cell.

struct TextTable {
    var header: [String]
    var rows: [[String]] = []

    init(_ header: [String]) { self.header = header }

    mutating func add(_ row: [String]) { rows.append(row) }

    func render(indent: String = "  ") -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0 }
        func isNumber(_ text: String) -> Bool { !text.isEmpty && text.allSatisfy { $0.isNumber || $0 == "." || $0 == "%" } }
        return all.map { row in
            indent + row.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return isNumber(cell) ? pad + cell : cell + pad
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }.joined(separator: "\n")
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var text = self
        while text.hasSuffix(" ") { text.removeLast() }
        return text
    }
}
