/*
 * libnvrtc_builtins_standin.c - a stand-in for libnvrtc-builtins.so.MAJOR.MINOR.
 *
 * The real NVRTC loads its builtins library by soname when it compiles; the stand-in NVRTC does
 * the same, so a package laid out without it (or a loader that cannot find it) fails the way
 * the real one does. Built by smoketest.BuildStandInNVRTC with the soname of its version.
 */
int nvrtc_standin_builtins_present(void) { return 1; }
