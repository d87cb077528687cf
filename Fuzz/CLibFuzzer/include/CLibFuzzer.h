#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry point for programs with their own `main` (https://llvm.org/docs/LibFuzzer.html#using-libfuzzer-as-a-library):
/// parses the libFuzzer options in argv and runs `callback` on every input. Provided by -sanitize=fuzzer.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
