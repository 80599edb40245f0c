// PERMITCHECK_UNDER_ASAN is 1 when this translation unit is built with AddressSanitizer, by gcc
// (which defines __SANITIZE_ADDRESS__) or by clang (which reports it through __has_feature), and
// 0 otherwise. Tests that limit the address space skip under it: ASan reserves terabytes of it.
#ifndef PERMITCHECK_TESTS_TESTING_ADDRESS_SANITIZER_H_
#define PERMITCHECK_TESTS_TESTING_ADDRESS_SANITIZER_H_

#if defined(__SANITIZE_ADDRESS__)
#define PERMITCHECK_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PERMITCHECK_UNDER_ASAN 1
#endif
#endif
#ifndef PERMITCHECK_UNDER_ASAN
#define PERMITCHECK_UNDER_ASAN 0
#endif

#endif  // PERMITCHECK_TESTS_TESTING_ADDRESS_SANITIZER_H_
