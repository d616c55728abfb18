/// A position in the raw input of a stream.
///
/// `line` and `column` are 1-based and count characters, as an editor shows them; `byteOffset` is the 0-based
/// offset in the bytes that were fed, which is what a program seeking into the input needs.
public struct SourcePosition: Hashable, Sendable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public var byteOffset: Int

    public init(line: Int, column: Int, byteOffset: Int) {
        self.line = line
        self.column = column
        self.byteOffset = byteOffset
    }

    public var description: String { "line \(line), column \(column) (byte \(byteOffset))" }
}
