import Foundation

/// Whether this test process, and so the `presence` built beside it, runs under ThreadSanitizer: everything is
/// several times slower, and a resident-memory figure includes the sanitizer's shadow memory.
package let underThreadSanitizer = dlsym(dlopen(nil, RTLD_NOW), "__tsan_init") != nil
