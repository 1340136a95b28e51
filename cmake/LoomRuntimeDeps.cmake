# The packages the runtime needs (all from Debian): found by the top-level
# build before it adds the runtime, and by the runtime configured alone.
find_package(Protobuf REQUIRED)
find_package(ONNX REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(GTest REQUIRED)
find_package(FlatBuffers REQUIRED)
find_program(FLATC_EXECUTABLE flatc REQUIRED)
# xxhash (Debian's libxxhash-dev), header-only use: the program file's
# checksum (runtime/include/loom/Runtime/ProgramSeal.h).
find_path(XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
include(GoogleTest)
