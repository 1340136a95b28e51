# Build options shared by the whole build and by the runtime configured
# alone (runtime/CMakeLists.txt): the sanitizers, warnings as errors, ccache.
# Included before any target is made, so every target gets them.
option(LOOM_SANITIZE "Build with AddressSanitizer + UndefinedBehaviorSanitizer" OFF)
if(LOOM_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
  # ASan's defaults for every binary (cmake/AsanDefaults.cpp says why):
  # an object file linked into each target made after it (an archive's
  # member would not be taken: the sanitizer runtime's weak default
  # already resolves the symbol).
  add_library(loom_asan_defaults OBJECT ${CMAKE_CURRENT_LIST_DIR}/AsanDefaults.cpp)
  link_libraries(loom_asan_defaults)
endif()

# Warnings as errors (scripts/test.sh builds with it). One warning is not
# ours: libstdc++ 12's std::stable_sort calls std::get_temporary_buffer,
# which C++20 deprecates, and clang 22 reports it inside the system header
# at every instantiation; -Wdeprecated-declarations is off for it.
option(LOOM_WERROR "Treat compiler warnings as errors" OFF)
if(LOOM_WERROR)
  add_compile_options(-Wno-deprecated-declarations -Werror)
endif()

find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
  set(CMAKE_C_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
endif()
