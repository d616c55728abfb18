import Foundation
import LibFuzzerDriver

/// Runs libFuzzer with this process's arguments, calling `target` on every input, and exits with its status.
///
/// SwiftPM gives an executable its own `main`, so the targets start libFuzzer through `LLVMFuzzerRunDriver`
/// instead of libFuzzer's `main`.
public func runLibFuzzer(_ target: @convention(c) (UnsafePointer<UInt8>?, UInt) -> CInt) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, target))
}
