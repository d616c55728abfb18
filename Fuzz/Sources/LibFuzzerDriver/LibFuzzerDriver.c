// The declaration in include/LibFuzzerDriver.h is all there is: libFuzzer itself provides the function.
