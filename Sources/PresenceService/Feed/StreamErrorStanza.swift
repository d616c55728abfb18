import XMPPStream

/// The bytes a feeder gets when its stream ends in error: an XMPP stream header (the service never sent one),
/// the `<stream:error>` with its condition and a readable text, and the closing tag (RFC 6120 §4.9).
enum StreamErrorStanza {
    static func bytes(_ condition: XMPPStreamError.Condition, text: String) -> [UInt8] {
        let escaped = text
            .replacingAll("&", with: "&amp;").replacingAll("<", with: "&lt;").replacingAll(">", with: "&gt;")
        let document = "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='\(XMPPNamespace.streams)' version='1.0'>"
            + "<stream:error><\(condition.rawValue) xmlns='\(XMPPNamespace.streamErrors)'/>"
            + "<text xmlns='\(XMPPNamespace.streamErrors)'>\(escaped)</text></stream:error></stream:stream>"
        return Array(document.utf8)
    }

    static func bytes(for error: XMPPStreamError) -> [UInt8] {
        bytes(error.condition, text: "\(error.message) at line \(error.position.line), column \(error.position.column)")
    }
}

extension String {
    fileprivate func replacingAll(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
