// TreePageValidator: the structural checks every tree page passes before the pager returns it.
//
// Owns: which page types may appear in a tree and what each must satisfy beyond its checksum:
// branch and leaf pages their node layout (NodeLayout.swift's `validateNode`), overflow pages a
// payload that fits the page. WAL-only blocks (commit records, patches) and unknown types are refused. Never reads pages.

struct TreePageValidator: PageValidator {
    func problem(in page: PageBuffer) -> String? {
        switch page.type {
        case .branch, .leaf:
            return page.validateNode()
        case .overflow:
            if page.contentStart > page.size - PageHeader.size { return "overflow page claims \(page.contentStart) payload bytes" }
            return nil
        case .commit, .patches:
            return "a WAL \(page.type!.name) block where a tree page was expected"
        case nil:
            return "unknown page type \(page.typeByte)"
        }
    }
}
