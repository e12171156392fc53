// FoundationNumberText: numbers and booleans read out of text the way Foundation's NSString
// reads them (`boolValue`, `longLongValue`, `doubleValue`), which is how Core Data reads the
// default values of an Xcode model.
//
// Owns: the three lenient readings, written out so they behave the same on every platform:
// leading whitespace is skipped, then an optional sign; a number is the longest prefix that
// forms one, and text with no such prefix reads as 0 (false for booleans). Strict parsing is the
// model reader's; this is only asked when that fails. Never throws and never reads a locale.

import Foundation

enum FoundationNumberText {
    /// `NSString.boolValue`: true when, after whitespace, an optional sign and leading zeros,
    /// the first character is one of "Y", "y", "T", "t" or a digit 1–9; anything after it is
    /// ignored ("YES", "true", "1", "2.5" → true; "NO", "0", "0.0", "" → false).
    static func bool(_ text: String) -> Bool {
        var scalars = Substring(text).unicodeScalars.drop { $0.properties.isWhitespace }
        if let first = scalars.first, first == "+" || first == "-" { scalars = scalars.dropFirst() }
        scalars = scalars.drop { $0 == "0" }
        guard let first = scalars.first else { return false }
        return "YyTt".unicodeScalars.contains(first) || ("1"..."9").contains(first)
    }

    /// `NSString.longLongValue`: the leading decimal integer (digits after an optional sign,
    /// stopping at the first other character), saturated at the ends of Int64; 0 without one.
    static func integer(_ text: String) -> Int64 {
        var scalars = Substring(text).unicodeScalars.drop { $0.properties.isWhitespace }
        var negative = false
        if let first = scalars.first, first == "+" || first == "-" {
            negative = first == "-"
            scalars = scalars.dropFirst()
        }
        var magnitude: UInt64 = 0
        for scalar in scalars {
            guard ("0"..."9").contains(scalar) else { break }
            let (times, overflowA) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times.addingReportingOverflow(UInt64(scalar.value - 48))
            if overflowA || overflowB { return negative ? .min : .max }
            magnitude = sum
        }
        if negative { return magnitude > UInt64(Int64.max) ? .min : -Int64(magnitude) }
        return magnitude > UInt64(Int64.max) ? .max : Int64(magnitude)
    }

    /// `NSString.doubleValue`: the longest leading prefix that reads as a decimal floating-point
    /// number (sign, digits, one point, an exponent), 0 without one.
    static func double(_ text: String) -> Double {
        let scalars = Array(Substring(text).unicodeScalars.drop { $0.properties.isWhitespace })
        var index = 0
        func digits() -> String {
            var run = ""
            while index < scalars.count, ("0"..."9").contains(scalars[index]) {
                run.unicodeScalars.append(scalars[index])
                index += 1
            }
            return run
        }
        var sign = ""
        if index < scalars.count, scalars[index] == "+" || scalars[index] == "-" {
            sign = scalars[index] == "-" ? "-" : ""
            index += 1
        }
        let whole = digits()
        var fraction = ""
        if index < scalars.count, scalars[index] == "." {
            index += 1
            fraction = digits()
        }
        guard !whole.isEmpty || !fraction.isEmpty else { return 0 }
        var exponent = ""
        if index < scalars.count, scalars[index] == "e" || scalars[index] == "E" {
            index += 1
            var exponentSign = ""
            if index < scalars.count, scalars[index] == "+" || scalars[index] == "-" {
                exponentSign = scalars[index] == "-" ? "-" : ""
                index += 1
            }
            let exponentDigits = digits()
            if !exponentDigits.isEmpty { exponent = "e" + exponentSign + exponentDigits }
        }
        return Double(sign + (whole.isEmpty ? "0" : whole) + "." + (fraction.isEmpty ? "0" : fraction) + exponent) ?? 0
    }
}
