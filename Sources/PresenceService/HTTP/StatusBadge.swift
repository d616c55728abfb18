import PresenceStore
import PresenceWire
import XMPPStream

/// A small SVG status badge for any page or wiki (`GET /v1/presence/{jid}/badge.svg`), like Openfire's
/// `type=image`: a coloured dot for the state and show, and the status text (or the state in words).
enum StatusBadge {
    /// The dot's colour and the words shown when the user set no status text.
    static func appearance(of result: PresenceQueryResult) -> (colour: String, words: String) {
        switch result.state {
        case .available:
            switch result.show {
            case .away: ("#e0a100", "away")
            case .xa: ("#d97706", "extended away")
            case .dnd: ("#d0312d", "do not disturb")
            case .chat: ("#1f9d55", "free to chat")
            case nil: ("#2e9e44", "available")
            }
        case .offline: ("#8a8a8a", "offline")
        case .unknown: ("#c4c4c4", "unknown")
        case .lost: ("#7e57c2", "status lost")
        }
    }

    /// The badge for one answer. Text longer than 60 characters is cut with an ellipsis; control characters
    /// (not allowed in XML) become spaces.
    static func svg(for result: PresenceQueryResult) -> String {
        let (colour, words) = appearance(of: result)
        var text = result.status.flatMap { $0.isEmpty ? nil : $0 } ?? words
        text = String(
            text.unicodeScalars.map { $0.value < 0x20 || (0x7F ..< 0xA0).contains($0.value) ? " " : Character($0) })
        if text.count > 60 { text = String(text.prefix(59)) + "…" }
        // About 6.6 px per character at 11 px in the usual sans-serif faces; the badge grows with its text.
        let textWidth = max(20, Int((Double(text.count) * 6.6).rounded(.up)))
        let width = 22 + textWidth + 8
        let label = XMPPWriter.escaped("\(result.jid): \(text)")
        let shown = XMPPWriter.escaped(text)
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="20" role="img" aria-label="\(label)">\
            <title>\(label)</title>\
            <rect width="\(width)" height="20" rx="3" fill="#f6f8fa" stroke="#d0d7de"/>\
            <circle cx="11" cy="10" r="5" fill="\(colour)"/>\
            <text x="22" y="14" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" fill="#24292f">\(shown)</text>\
            </svg>
            """
    }
}
