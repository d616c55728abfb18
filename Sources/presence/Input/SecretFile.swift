import ArgumentParser
import Foundation

/// A file holding a secret (a password, a shared secret, API tokens): secrets are given in files, never on the
/// command line, where `ps` and shell history would show them.
struct SecretFile {
    let path: String
    /// The option that named the file, for messages.
    let option: String

    /// The whole file; a usage error (exit 64) naming the option when it cannot be read.
    func contents() throws -> String {
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ValidationError("\(option) \(path) cannot be read: \(error.localizedDescription)")
        }
    }

    /// The first line, without its line ending; a usage error when it is empty.
    func firstLine() throws -> String {
        let line = String(
            try contents().split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        )
        .trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
        guard !line.isEmpty else { throw ValidationError("\(option) \(path) is empty") }
        return line
    }

    /// Whether others than the file's owner may read it (worth a warning, as ssh gives).
    var isShared: Bool {
        guard let permissions = try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        else { return false }
        return permissions & 0o077 != 0
    }
}
