// Only the header matters: LLVMFuzzerRunDriver is defined by the toolchain's libclang_rt.fuzzer.
#include "CLibFuzzer.h"
