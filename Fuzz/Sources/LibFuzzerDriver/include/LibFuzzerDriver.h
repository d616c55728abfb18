// libFuzzer's entry for programs that have their own main (compiler-rt's FuzzerInterface.h): parses libFuzzer's
// options from argc/argv and runs `callback` on every input. Linked in by `-sanitize=fuzzer`.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const unsigned char *data, unsigned long size));
