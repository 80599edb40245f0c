// The source of the precompiled-header groups (permitcheck_test_pch_group in CMakeLists.txt):
// an object library needs one, and this one compiles nothing but the precompiled header.
