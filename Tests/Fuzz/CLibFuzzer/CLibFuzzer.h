// libFuzzer's driver, called from Swift so the fuzz executable keeps its own
// `main` (SwiftPM links executables with `main` renamed, which clashes with
// libFuzzer's). Only declared here: `make fuzz` links
// libclang_rt.fuzzer_no_main from the Swift toolchain, which defines it.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
