// intact-fuzz TARGET [ARGUMENTS...]
//
// Built by `make fuzz` with INTACT_LIBFUZZER defined, coverage and
// AddressSanitizer: the arguments after TARGET go to libFuzzer (corpus
// directories, -max_total_time=…). In the normal build, without libFuzzer,
// it replays files and directories through the target instead, to
// reproduce a crash in the debugger.
import FuzzTargets
import Foundation
#if INTACT_LIBFUZZER
import CLibFuzzer
#endif

let arguments = CommandLine.arguments
guard arguments.count >= 2, let chosen = FuzzTarget(rawValue: arguments[1]) else {
    let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
    FileHandle.standardError.write(Data("usage: intact-fuzz TARGET [ARGUMENTS...]; targets: \(names)\n".utf8))
    exit(2)
}

#if INTACT_LIBFUZZER
/// The target libFuzzer's callback runs: set once, before the driver starts.
nonisolated(unsafe) var selected = chosen
selected = chosen
// libFuzzer sees the program name and the arguments after TARGET.
var fuzzerArguments: [UnsafeMutablePointer<CChar>?] = [strdup(arguments[0])] + arguments.dropFirst(2).map { strdup($0) } + [nil]
var fuzzerCount = Int32(fuzzerArguments.count - 1)
let status = fuzzerArguments.withUnsafeMutableBufferPointer { buffer -> Int32 in
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = buffer.baseAddress
    return LLVMFuzzerRunDriver(&fuzzerCount, &argv) { data, size in
        selected.run(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
        return 0
    }
}
exit(status)
#else
var replayed = 0
for path in arguments.dropFirst(2) {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
        FileHandle.standardError.write(Data("intact-fuzz: no such file: \(path)\n".utf8))
        exit(1)
    }
    let files = isDirectory.boolValue
        ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { "\(path)/\($0)" }
        : [path]
    for file in files {
        guard let data = FileManager.default.contents(atPath: file) else { continue }
        chosen.run([UInt8](data))
        replayed += 1
    }
}
print("intact-fuzz: \(replayed) inputs through \(chosen.rawValue), no crash (built without libFuzzer: replay only)")
#endif
