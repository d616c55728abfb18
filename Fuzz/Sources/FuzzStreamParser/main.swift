import FuzzSupport
import XMPPStream

/// The parser never crashes, whatever the bytes and however they are split; after an error it stays failed with
/// the same error; positions are within the input.
func fuzzStreamParser(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    let input = UnsafeRawBufferPointer(start: UnsafeRawPointer(start), count: count)
    // The first byte chooses the chunk size (1–256 bytes), so splits fall everywhere.
    let chunk = Int(input[0]) + 1
    let bytes = UnsafeRawBufferPointer(rebasing: input.dropFirst())
    let parser = XMPPStreamParser(
        configuration: .init(limits: XMPPStreamLimits(maxStanzaBytes: 4096, maxElementDepth: 16, maxChildElements: 64)))
    var stanzas = 0
    var failure: XMPPStreamError?
    var offset = 0
    while offset < bytes.count {
        let end = min(offset + chunk, bytes.count)
        do throws(XMPPStreamError) {
            try parser.feed(UnsafeRawBufferPointer(rebasing: bytes[offset ..< end])) { event in
                if case .stanza(let stanza) = event {
                    stanzas += 1
                    precondition(stanza.elementCount >= 1, "a stanza has its root element")
                    _ = stanza.localName(of: stanza.root)
                    parser.recycle(stanza)
                }
            }
        } catch {
            failure = error
            break
        }
        offset = end
    }
    if failure == nil {
        do throws(XMPPStreamError) { try parser.finish { _ in } } catch { failure = error }
    }
    if let failure {
        precondition(parser.error == failure, "the parser keeps the error that ended the stream")
        precondition(failure.position.line >= 1 && failure.position.column >= 0, "a position in the text")
        precondition(failure.position.byteOffset <= bytes.count, "a position within the input")
        do throws(XMPPStreamError) {
            try parser.feed(UnsafeRawBufferPointer(rebasing: bytes[0 ..< 0])) { _ in
                preconditionFailure("no events after the stream failed")
            }
        } catch {}
    }
    return 0
}

runLibFuzzer { data, size in fuzzStreamParser(data, Int(size)) }
