//===- AsanDefaults.cpp - AddressSanitizer's defaults in sanitizer builds -===//
//
// Linked into every binary of a LOOM_SANITIZE build (cmake/LoomOptions.cmake).
// LLVM's and MLIR's libraries come from Debian, not instrumented, but the
// allocators their headers inline into Loom's code are: an instrumented copy
// of llvm::BumpPtrAllocator poisons a new slab and unpoisons each block it
// hands out, while the library's own copy of the fast path hands out blocks
// of the same slab without unpoisoning them. Which copy a binary runs
// depends on what the linker keeps, so MLIRContext's construction could
// report a use-after-poison in mlir::Dialect::addType that no Loom code
// causes. The manual poisoning only LLVM's headers do is turned off;
// ASan's own checks (heap, stack, globals, leaks) are not affected.
//
//===----------------------------------------------------------------------===//

extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}
