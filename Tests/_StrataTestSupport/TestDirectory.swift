// TestDirectory: where a test process puts its files, removed when the process exits.
//
// Owns: one directory per test process (`strata-tests-PID` in the system's temporary
// directory), made on first use. Tests put their stores, models and generated files inside it,
// under names of their own, so a run leaves nothing behind. Must never be used by products.

import Foundation

public enum TestDirectory {
    /// This process's directory (made on first use, removed at exit).
    public static let url: URL = {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-tests-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        // A C function: no captures, so it reads the path again.
        atexit { try? FileManager.default.removeItem(atPath: TestDirectory.path) }
        return url
    }()

    /// `url`'s path.
    public static var path: String { url.path }
}
